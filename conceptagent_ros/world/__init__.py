"""A scene file exported as a world both Gazebo and PyBullet load (SDFormat 1.9) and as an occupancy
map in map_server's format (for Nav2 and the embedded navigator): floor_plan (walls and doorways
from the rooms), sdf_world, occupancy_map, export (the `conceptagent world export` command's work)."""
