"""Slices of an axis that keep each piece under a memory budget."""

from __future__ import annotations

__all__ = ["chunk_slices"]


def chunk_slices(n_items: int, item_size: int, max_elements: int) -> list[slice]:
    """Consecutive slices covering ``range(n_items)``, each of at most
    ``max_elements // item_size`` items (at least one) of ``item_size``
    elements: one slice when everything fits.

    Examples
    --------
    >>> from sklearn_pt._chunks import chunk_slices
    >>> chunk_slices(10, 3, 12)
    [slice(0, 4, None), slice(4, 8, None), slice(8, 10, None)]
    >>> chunk_slices(10, 3, 100)
    [slice(0, 10, None)]
    """
    size = max(1, max_elements // max(item_size, 1))
    return [
        slice(start, min(start + size, n_items)) for start in range(0, n_items, size)
    ]
