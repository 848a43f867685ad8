"""compilelint's rules, one module per rule. Each registers itself by subclassing `Rule`."""
