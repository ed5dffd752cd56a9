"""Barrier-contact (IPC) engine: bodies, energies, contacts and time steps.

Knows nothing about grippers, grasps, datasets or files (see DESIGN.md section 1).
"""
