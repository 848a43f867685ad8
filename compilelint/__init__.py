"""compilelint: find, fix and verify code that graph-breaks or recompiles under torch.compile."""

__version__ = "0.1.0"
