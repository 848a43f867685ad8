"""The breadth corpus: one module per library (see models._breadth_libraries)."""
