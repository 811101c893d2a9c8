"""The extraction methods, one module per algorithm family (CETR, CCB, CoreEx, CETD)."""
