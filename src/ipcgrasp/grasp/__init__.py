"""Grasp simulation (docs/grasp_procedure.md): the gripper description, seeded pose noise, the scene
placement, the grasp procedure over a dynamic backend and the trial outcome."""
