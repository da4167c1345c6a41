"""Where to put a held object down, from the receptacle's points and the points around it.

The support is the receptacle's largest near-horizontal plane (open3d RANSAC): a table's top, a
tray's or a drawer's floor. If the receptacle rises above that plane around it (walls, a rim), it is
a container and the object goes inside, below the rim. Candidate spots on a grid over the plane
must be supported under the whole footprint (plane points under its edge all round) and free of
every other point -- walls, objects already there, neighbours -- within the footprint plus a margin,
up to the object's height. The spot nearest the requested one (by default the support's middle)
wins, ties broken by clearance.

The footprint is a circle round the object's bottom, which a long thing (a 15 cm phone, a 25 cm
loaf) needs far more room for than it takes. Where no circle fits and the object's footprint
rectangle is given, the rectangle is tried at a few turns about the vertical (smallest turn first):
along a shelf's strip in front of what stands there, along a toaster's top; the place then says by
how much the hand turns the thing on its way (PlacePose.turn).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from scipy.spatial import cKDTree

from conceptagent_ros.manipulation.clouds import clean, fit_plane
from conceptagent_ros.manipulation.failures import ManipulationError


@dataclass(frozen=True)
class PlaceConfig:
    grid: float = 0.01  # candidate spacing on the support, metres
    max_tilt_deg: float = 10.0  # a support is within this of horizontal
    plane_threshold: float = 0.005
    min_support_points: int = 30
    margin: float = 0.01  # free space kept around the footprint
    wall_height: float = 0.015  # receptacle points this far above the support make it a container
    release_height: float = 0.01  # the object's bottom is let go this far above the support
    support_gap: float = 0.012  # plane points must lie within this of the footprint's edge, all round
    # gaps in the support's points up to this wide are filled before that test: a camera looking at a
    # surface at a grazing angle (a mast camera over a 1.2 m shelf's top) sees it in rows 2-4 cm apart
    fill_gap: float = 0.04
    plane_tries: int = 6  # the largest planes looked through for a level one


@dataclass(frozen=True)
class Footprint:
    """A thing's footprint as a rectangle: half its length and half its width (metres), and the
    heading of its length (radians, world)."""

    half_length: float
    half_width: float
    yaw: float

    @classmethod
    def of(cls, xy: np.ndarray) -> Footprint:
        """The rectangle along the principal axes of the points' x, y."""
        return cls.fit(xy)[0]

    @classmethod
    def fit(cls, xy: np.ndarray) -> tuple[Footprint, np.ndarray]:
        """The rectangle along the principal axes of the points' x, y, and its middle (x, y): the
        middle of their extent, not their mean (a pillow seen more on one side than the other had
        its mean 5 cm off its middle, and halves measured from the mean made it 55 x 44 cm for 50 x
        35: no spot on the bed fitted it)."""
        mean = xy.mean(axis=0)
        centred = xy - mean
        _, vectors = np.linalg.eigh(centred.T @ centred)
        major = vectors[:, 1]
        minor = np.array([-major[1], major[0]])
        along, across = centred @ major, centred @ minor
        middle = mean + major * (along.max() + along.min()) / 2 + minor * (across.max() + across.min()) / 2
        footprint = cls(float(np.ptp(along)) / 2, float(np.ptp(across)) / 2, float(np.arctan2(major[1], major[0])))
        return footprint, middle


# turns of a footprint rectangle tried where no circle fits, smallest first (a rectangle is the same
# turned half round, so these cover every heading 30 degrees apart)
RECTANGLE_TURNS = tuple(np.radians(a) for a in (0, 30, -30, 60, -60, 90))
# metres: a circle's spot this much farther from the one asked for (the hand) than a turned
# rectangle's is passed over for it (a pillow put on a bed beside another pillow: the circle round
# it fitted only a metre in, out of the arm's reach; turned, it fits along the bed's near edge)
RECTANGLE_IF_FARTHER = 0.15
TURN_COST = 0.05  # metres of distance to the spot asked for that a radian of turn is worth


@dataclass(frozen=True)
class PlacePose:
    position: np.ndarray  # where the object's bottom centre is released, world
    support_height: float  # the support plane's height there
    clearance: float  # from the footprint's edge to the nearest other point, metres (inf: none near)
    inside: bool  # in a container, below its rim
    rim_height: float | None
    seconds: float = 0.0
    # radians about the vertical the thing must be turned on its way to fit (a footprint rectangle's
    # spot); None: a circle's spot, any turn fits
    turn: float | None = None


class PlacePlanner:
    def __init__(self, config: PlaceConfig | None = None):
        self.config = config or PlaceConfig()

    def plan(self, footprint_radius: float, object_height: float, receptacle_points: object,
             scene_points: object = None, near: tuple[float, float] | None = None,
             footprint: Footprint | None = None) -> PlacePose:
        """A place for an object of `footprint_radius` (its bottom's circumradius) and `object_height`
        on or in the receptacle; NO_SUPPORT_SURFACE or NO_PLACE_FOUND when there is none.
        `footprint`: its rectangle, tried turned where no circle fits."""
        started = time.perf_counter()
        cfg = self.config
        if not (footprint_radius > 0 and object_height > 0):
            raise ManipulationError("NO_PLACE_FOUND", f"the held object needs a size; got radius {footprint_radius}, "
                                                      f"height {object_height}")
        receptacle = clean(receptacle_points, "receptacle")
        others = clean(scene_points, "scene", required=False)
        # a cupboard's inside shows its back and both sides before its floor or shelf
        plane = fit_plane(receptacle, cfg.plane_threshold, cfg.min_support_points, cfg.max_tilt_deg, tries=cfg.plane_tries)
        if plane is None:
            raise ManipulationError("NO_SUPPORT_SURFACE", f"no near-horizontal surface of {cfg.min_support_points}+ "
                                                          "points on the receptacle")
        support = plane.inliers
        heights = plane.height(receptacle)
        rising = receptacle[heights > cfg.wall_height]
        inside = _surrounds(rising, support)
        rim = float(rising[:, 2].max()) if inside else None
        # everything that is not the support is an obstacle: walls, what lies there, the neighbours
        obstacles = np.concatenate([receptacle[np.abs(heights) > cfg.plane_threshold * 2], others])
        obstacle_heights = plane.height(obstacles) if len(obstacles) else np.zeros(0)
        in_the_way = obstacles[(obstacle_heights > cfg.plane_threshold) &
                               (obstacle_heights < object_height + cfg.release_height + cfg.margin)]
        blocked = cKDTree(in_the_way[:, :2]) if len(in_the_way) else None
        under = cKDTree(np.vstack([support[:, :2], _filled_gaps(support[:, :2], cfg.grid, cfg.fill_gap)]))

        lower, upper = support[:, :2].min(axis=0), support[:, :2].max(axis=0)
        xs = np.arange(lower[0], upper[0] + 1e-9, cfg.grid)
        ys = np.arange(lower[1], upper[1] + 1e-9, cfg.grid)
        cells = np.array(np.meshgrid(xs, ys)).reshape(2, -1).T
        # supported all round: a plane point near each of 12 points on the footprint's edge
        ring = np.array([[np.cos(a), np.sin(a)] for a in np.linspace(0, 2 * np.pi, 12, endpoint=False)])
        edge = (cells[:, None, :] + footprint_radius * ring[None, :, :]).reshape(-1, 2)
        gaps, _ = under.query(edge)
        supported = (gaps.reshape(len(cells), len(ring)) <= cfg.support_gap).all(axis=1)
        centre_gap, _ = under.query(cells)
        supported &= centre_gap <= cfg.support_gap
        if blocked is not None:
            nearest, _ = blocked.query(cells)
            clearance = nearest - footprint_radius
        else:
            clearance = np.full(len(cells), np.inf)
        free = supported & (clearance >= cfg.margin)
        target = np.asarray(near, dtype=float) if near is not None else support[:, :2].mean(axis=0)
        circle_off = float(np.linalg.norm(cells[free] - target, axis=1).min()) if free.any() else np.inf
        if footprint is not None and (not free.any() or (near is not None and circle_off > RECTANGLE_IF_FARTHER)):
            turned = self._rectangle(footprint, cells, (len(ys), len(xs)), under, in_the_way[:, :2], target)
            if turned is not None and float(np.linalg.norm(turned[0] - target)) < circle_off - RECTANGLE_IF_FARTHER:
                (x, y), turn, room = turned
                z = _plane_z(plane.normal, plane.offset, x, y)
                return PlacePose(np.array([x, y, z + cfg.release_height]), z, room, inside, rim,
                                 time.perf_counter() - started, turn)
        if not free.any():
            why = "the support is smaller than the object" if not supported.any() else \
                f"every supported spot is within {cfg.margin * 1000:.0f} mm of something"
            shape = f"{2 * footprint_radius:.3f} m across" if footprint is None else \
                f"{2 * footprint.half_length:.3f} x {2 * footprint.half_width:.3f} m at any turn"
            raise ManipulationError("NO_PLACE_FOUND", f"no spot for an object {shape}: {why}")
        candidates = np.flatnonzero(free)
        distance = np.linalg.norm(cells[candidates] - target, axis=1)
        # nearest the target; within a grid step of that, the roomiest (then the nearest)
        close = distance <= distance.min() + cfg.grid
        room = np.minimum(clearance[candidates[close]], 0.05)  # beyond 5 cm, room is room enough
        chosen = candidates[close][np.lexsort((distance[close], -room))[0]]
        x, y = cells[chosen]
        z = _plane_z(plane.normal, plane.offset, x, y)
        return PlacePose(np.array([x, y, z + cfg.release_height]), z, float(clearance[chosen]), inside, rim,
                         time.perf_counter() - started)


    def _rectangle(self, footprint: Footprint, cells: np.ndarray, shape: tuple[int, int], under: cKDTree,
                   obstacles: np.ndarray, target: np.ndarray) -> tuple[np.ndarray, float, float] | None:
        """The spot nearest `target` for the footprint rectangle over the turns tried (a turn
        costing TURN_COST a radian): (x y, turn, clearance), or None. Obstacles within the rectangle grown by the margin block a
        cell (rasterised on the cells' grid, a convolution per turn); plane points near its edge all
        round (every 2 cm) and its middle carry it."""
        from scipy.ndimage import convolve

        cfg = self.config
        a, b = footprint.half_length, footprint.half_width
        reach = int(np.ceil((np.hypot(a, b) + cfg.margin) / cfg.grid)) + 1
        ny, nx = shape
        occupied = np.zeros((ny + 2 * reach, nx + 2 * reach))
        if len(obstacles):
            origin = cells[0] - reach * cfg.grid  # cells run x fastest from the grid's lowest corner
            index = np.round((obstacles - origin) / cfg.grid).astype(int)
            inside = (index >= 0).all(axis=1) & (index[:, 0] < nx + 2 * reach) & (index[:, 1] < ny + 2 * reach)
            occupied[index[inside, 1], index[inside, 0]] = 1.0
        offsets = np.arange(-reach, reach + 1) * cfg.grid
        kx, ky = np.meshgrid(offsets, offsets)
        # the perimeter every 2 cm (corners included) and the middle, before turning
        along = np.linspace(-a, a, max(2, int(np.ceil(2 * a / 0.02)) + 1))
        across = np.linspace(-b, b, max(2, int(np.ceil(2 * b / 0.02)) + 1))
        outline = np.concatenate([np.column_stack([along, np.full_like(along, s * b)]) for s in (-1, 1)]
                                 + [np.column_stack([np.full_like(across, s * a), across]) for s in (-1, 1)]
                                 + [np.zeros((1, 2))])
        # the grid's half-cell rounding is added to the margin: a rasterised obstacle is up to that far off
        grow = cfg.margin + cfg.grid / 2
        found: tuple[float, int, float, tuple[float, float]] | None = None
        for turn in RECTANGLE_TURNS:
            yaw = footprint.yaw + turn
            c, s = np.cos(yaw), np.sin(yaw)
            kernel = ((np.abs(kx * c + ky * s) <= a + grow) & (np.abs(-kx * s + ky * c) <= b + grow)).astype(float)
            blocked = convolve(occupied, kernel, mode="constant")[reach:reach + ny, reach:reach + nx].ravel() > 0.5
            open_cells = np.flatnonzero(~blocked)
            if not len(open_cells):
                continue
            turned = outline @ np.array([[c, s], [-s, c]])
            gaps, _ = under.query((cells[open_cells][:, None, :] + turned[None, :, :]).reshape(-1, 2))
            carried = (gaps.reshape(len(open_cells), len(turned)) <= cfg.support_gap).all(axis=1)
            if not carried.any():
                continue
            candidates = open_cells[carried]
            distance = np.linalg.norm(cells[candidates] - target, axis=1)
            here = int(np.argmin(distance))
            cost = float(distance[here]) + TURN_COST * abs(float(turn))
            if found is None or cost < found[0]:
                found = (cost, candidates[here], float(turn), (c, s))
        if found is None:
            return None
        _, best, turn, (c, s) = found
        room = np.inf
        if len(obstacles):
            d = obstacles - cells[best]
            u, v = np.abs(d @ np.array([c, s])) - a, np.abs(d @ np.array([-s, c])) - b
            room = float(np.hypot(np.maximum(u, 0.0), np.maximum(v, 0.0)).min())
        return cells[best], turn, room


DRAWER_TOP_GAP = 0.05  # metres: a drawer's floor lies at least this far below the top of what holds it
UNDER_TOP = 0.03  # metres: a point this near a point of the top, seen from above, lies under it


def drawer_inside(points: object, config: PlaceConfig | None = None) -> np.ndarray:
    """A drawer's points less its cabinet's top, where a level surface lies below that top: things
    go into a drawer, and a chest's top (larger than the part of its top drawer pulled out) was
    chosen over the drawer's floor, and the floor under that top is out of the hand's way in.
    A drawer with nothing above its floor keeps all its points."""
    cfg = config or PlaceConfig()
    cloud = clean(points, "receptacle")
    top = fit_plane(cloud, cfg.plane_threshold, cfg.min_support_points, cfg.max_tilt_deg, tries=cfg.plane_tries)
    if top is None:
        return cloud
    below = cloud[top.height(cloud) < -DRAWER_TOP_GAP]
    floor = fit_plane(below, cfg.plane_threshold, cfg.min_support_points, cfg.max_tilt_deg, tries=cfg.plane_tries)
    if floor is None:
        return cloud
    # what lies under the top is seen below its edge (a mast camera sees 20 cm in), but no hand
    # coming down from above gets there
    lower = cloud[top.height(cloud) < -cfg.plane_threshold * 4]
    under_top = cKDTree(top.inliers[:, :2]).query(lower[:, :2], distance_upper_bound=UNDER_TOP)[0] < np.inf
    return lower[~under_top]


def _filled_gaps(xy: np.ndarray, cell: float, gap: float) -> np.ndarray:
    """Centres of the empty raster cells (of side `cell`) that a morphological closing of the
    points' occupancy fills: holes and slots up to about `gap` wide between seen points. A closing
    does not grow a region past its outer edges, so a support's outline stays as seen."""
    from scipy.ndimage import binary_closing

    if len(xy) == 0:
        return np.zeros((0, 2))
    reach = max(1, int(np.ceil(gap / cell / 2)))
    pad = reach + 1
    origin = xy.min(axis=0) - pad * cell
    index = np.floor((xy - origin) / cell).astype(int)
    shape = index.max(axis=0) + pad + 1
    occupied = np.zeros(shape, dtype=bool)
    occupied[index[:, 0], index[:, 1]] = True
    closed = binary_closing(occupied, structure=np.ones((3, 3), dtype=bool), iterations=reach)
    return (np.argwhere(closed & ~occupied) + 0.5) * cell + origin


def _plane_z(normal: np.ndarray, offset: float, x: float, y: float) -> float:
    return float(-(normal[0] * x + normal[1] * y + offset) / normal[2])


def _surrounds(rising: np.ndarray, support: np.ndarray, sectors: int = 8) -> bool:
    """Whether points above the support stand around it on every side (walls of a container), not
    just on one (a neighbouring object, a backsplash)."""
    if len(rising) < sectors:
        return False
    centre = support[:, :2].mean(axis=0)
    angles = np.arctan2(rising[:, 1] - centre[1], rising[:, 0] - centre[0])
    occupied = np.unique(np.floor((angles + np.pi) / (2 * np.pi) * sectors).astype(int) % sectors)
    return len(occupied) == sectors
