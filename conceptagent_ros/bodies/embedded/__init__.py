"""The embedded world's robot as a body that senses: it sees the world through synthetic RGB-D frames
fused into a 3D object map (perceiving_robot.py). The world itself, whose robot acts on symbols, is
sim/world.py."""
