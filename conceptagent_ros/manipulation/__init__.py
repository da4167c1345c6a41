"""Manipulation planned from perceived points: grasps, placements, opening and closing.

No ROS and no simulator here: the planners take point clouds (world frame, metres) and a robot's
description (config/manipulation/<robot>.yaml), and return poses with named failures. The
physical arm that executes them and the skill servers that expose them build on this package."""
