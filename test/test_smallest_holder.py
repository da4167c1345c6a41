"""What a thing stands in or on, from the boxes a body's camera saw: the smallest holder whose
footprint is under the thing's centre, at the height the thing's bottom is."""
from __future__ import annotations

import numpy as np

from conceptagent_ros.perception.relations3d import smallest_holder


def box(lo, hi):
    return np.array(lo, float), np.array(hi, float)


BOXES = {
    "table": box([0, 0, 0], [1.2, 0.8, 0.75]),
    "tray": box([0.2, 0.2, 0.75], [0.6, 0.5, 0.80]),
    "cup": box([0.3, 0.3, 0.76], [0.38, 0.38, 0.86]),  # in the tray
    "apple": box([0.9, 0.5, 0.75], [0.97, 0.57, 0.82]),  # on the table, beside the tray
    "pen": box([0.3, 0.3, 1.20], [0.32, 0.45, 1.22]),  # held high above the tray
    "plate": box([2.0, 2.0, 0.0], [2.3, 2.3, 0.02]),  # on the floor, nothing under it
}
HOLDERS = ["table", "tray"]


def test_the_smallest_holder_under_the_centre_wins():
    assert smallest_holder("cup", BOXES, HOLDERS, 0.03) == "tray"
    assert smallest_holder("apple", BOXES, HOLDERS, 0.03) == "table"


def test_a_thing_above_every_top_or_beside_every_holder_has_none():
    assert smallest_holder("pen", BOXES, HOLDERS, 0.03) is None
    assert smallest_holder("plate", BOXES, HOLDERS, 0.03) is None


def test_a_holder_no_larger_than_the_thing_does_not_hold_it():
    assert smallest_holder("tray", BOXES, ["cup", "table"], 0.03) == "table"


def test_the_margin_decides_a_bottom_just_below_a_top():
    sunk = dict(BOXES, apple=box([0.9, 0.5, 0.73], [0.97, 0.57, 0.80]))  # its bottom within the table's height
    low = dict(BOXES, tray=box([0.2, 0.2, 0.78], [0.6, 0.5, 0.82]), cup=box([0.3, 0.3, 0.76], [0.38, 0.38, 0.86]))
    assert smallest_holder("apple", sunk, HOLDERS, 0.01) == "table"  # within the table's height
    assert smallest_holder("cup", low, HOLDERS, 0.01) == "table"  # 2 cm below the tray's floor: not in it
    assert smallest_holder("cup", low, HOLDERS, 0.03) == "tray"
