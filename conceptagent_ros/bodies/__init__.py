"""Whatever executes the planner's skills, behind one factory (factory.make_body): the embedded
world's robot, the Panda at the PyBullet tabletop, conceptagent_mm in a household's exported world,
each seen as the caller asks. A Body is a RobotInterface plus what a judge and a node need of it."""
