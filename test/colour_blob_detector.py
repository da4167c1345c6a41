"""A detector plugin for the bag tests, loaded by `kind: plugin` from outside the package: the
embedded camera's paint detector under another name."""
from __future__ import annotations

from conceptagent_ros.perception.detectors.sim_paint import SimPaintDetector


class ColourBlobDetector(SimPaintDetector):
    """Finds things by the synthetic camera's paint (see SimPaintDetector)."""
