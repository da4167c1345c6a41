"""Houses the robot has never seen, drawn from a seed as ProcTHOR draws them: a room plan, rooms cut
from the house's rectangle, furniture against the walls in the places real homes put it, things
where they are usually found, and easy tasks over what is in plain view. The rules are data
(config/house_generation.yaml); `conceptagent scenes generate --seed N --out DIR` writes the files."""
from conceptagent_ros.world.generation.house import GeneratedHouse, generate_house, write_house

__all__ = ["GeneratedHouse", "generate_house", "write_house"]
