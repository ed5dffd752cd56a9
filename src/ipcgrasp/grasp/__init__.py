"""Grasp simulation (DESIGN.md section 4): the gripper description, seeded pose noise, the scene
placement, the squeeze/lift controller and the trial outcome."""
