"""Barrier-contact (IPC) engine: bodies, energies, contacts and time steps.

Knows nothing about grippers, grasps, datasets or files (the grasp layer, ipcgrasp.grasp, builds its scenes).
"""
