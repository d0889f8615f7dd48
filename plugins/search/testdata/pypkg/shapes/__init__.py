"""Shapes and their areas."""
from .core import Circle, Shape, total_area

__all__ = ["Circle", "Shape", "total_area"]
