"""conceptagent_mm as the task planner's body in a household scene's exported world, in PyBullet
(`run --body pybullet` on a household scene): the body (body.py: mast camera, navigator, arm skills),
its arm (mobile_arm), camera (robot_camera), the hidden half of what it sees (item_clouds), the judge
of its goals on PyBullet's state (judge) and a picture of a task from above (picture)."""
