"""One pad squeezed against a flat rigid block: the pad's normal force and strain energy as its
backing advances, and the strain energy at a given closing force (study.calibration's Psi_th(E),
docs/grasp_procedure.md, "The close rules")."""

from __future__ import annotations

import numpy as np
import trimesh

from ipcgrasp.engine.bodies import DeformableBody, KinematicBody
from ipcgrasp.engine.simulation import Simulation
from ipcgrasp.grasp.gripper import Gripper
from ipcgrasp.grasp.params import CONTACTS_PER_PAD, SimParams

GAP = 5e-4  # m between the pad's front face and the block at the start
OVERSHOOT_FACTOR = 2.0  # squeeze until the force passes this multiple of the closing force
MAX_STEPS = 400


def squeeze_test(E: float, params: SimParams, close_force: float | None = None, gripper=None) -> dict:
    """Drive one pad (back face glued to its backing) at the closing speed against a fixed flat
    block until its normal force exceeds OVERSHOOT_FACTOR x close_force. Near and in contact the
    advance per step shrinks to dhat / 10 so the force curve is resolved. Returns arrays time (s),
    advance (m), force (N), strain_energy (J) and psi_th (J): the strain energy interpolated (in
    log force) at close_force. `gripper`: a description's name or path (None: the YuMi) whose pad
    params.jaw names."""
    close_force = params.close_force if close_force is None else close_force
    gripper = Gripper.from_description(gripper, params.jaw, params.pad_resolution)
    pad = gripper.pad_mesh()
    lo, hi = pad.nodes.min(axis=0), pad.nodes.max(axis=0)
    size = hi - lo
    block = trimesh.creation.box(extents=(2 * size[0], 2 * size[1], 0.01))
    block.apply_translation(((lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, GAP + 0.005))
    bodies = [DeformableBody("pad", pad.nodes, pad.tets, E, params.nu, params.density, pad.back_nodes),
              KinematicBody("block", block.vertices, block.faces)]
    settings = params.solver_settings(gravity=(0.0, 0.0, 0.0), contact_force_scale=close_force / CONTACTS_PER_PAD)
    sim = Simulation(bodies, settings=settings)
    speed = params.closing_speed or gripper.closing_speed(gripper.max_opening, params.close_duration)
    advance, rows = 0.0, []
    for _ in range(MAX_STEPS):
        nominal = speed * params.dt
        gap = sim.body_distance("pad", "block", nominal + 2 * sim.dhat)
        step = nominal if gap > nominal + sim.dhat else (max(gap - sim.dhat, 0.1 * sim.dhat))
        pose = np.eye(4)
        pose[2, 3] = advance + step
        stats = sim.step({"pad": pose})
        advance += step * stats.driver_fraction
        force = float(np.linalg.norm(stats.contact_force[1, 0]))
        rows.append((sim.state.time, advance, force, stats.strain_energy["pad"]))
        if force > OVERSHOOT_FACTOR * close_force:
            break
    time_, adv, force, energy = map(np.array, zip(*rows))
    return {"time": time_, "advance": adv, "force": force, "strain_energy": energy,
            "psi_th": threshold_energy(force, energy, close_force)}


def threshold_energy(force, energy, close_force) -> float:
    """Strain energy at the first crossing of close_force, interpolated linearly in log force
    between the bracketing samples (nan if the force never reaches it)."""
    above = np.flatnonzero(force >= close_force)
    if not above.size:
        return float("nan")
    k = int(above[0])
    if k == 0 or force[k - 1] <= 0.0:
        return float(energy[k])
    w = (np.log(close_force) - np.log(force[k - 1])) / (np.log(force[k]) - np.log(force[k - 1]))
    return float(energy[k - 1] + w * (energy[k] - energy[k - 1]))
