"""The base's navigation without Nav2: paths on an occupancy map (path_planner, scikit-image's
minimum-cost path), where to stand to work on an object (approach), and the robot's base driving
them in the exported PyBullet world (pybullet_base), with named failures (errors)."""
