"""The physical worlds: pybullet_data's Panda at the tabletop with graspable things (grasp_world),
and the body the task planner drives there (tabletop_body, `run --body pybullet`), judged on
PyBullet's ground truth by tabletop_judge."""
