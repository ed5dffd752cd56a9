"""REACH area contact model (Danielczuk, Xu, Mahler, Matl, Chentanez, Goldberg, "REACH: Reducing
False Negatives in Robot Grasp Planning with a Robust Efficient Area Contact Hypothesis Model",
ISRR 2019).

What is implemented
-------------------
For each jaw, the contact patch is the object surface within the pad footprint and within the
silicone depth (5.296 mm) of where the pad first touches (`contacts.jaw_contact`). The contact is
planar: the pad's plane, normal to the closing direction z. The closing force F
(`params.close_force`) is spread at uniform pressure over the patch's area projected on that
plane and pushes the object along z; its resultant acts at the patch's centre of pressure c.
Friction follows the ellipsoidal approximation of the patch's frictional limit surface (Howe and
Cutkosky 1996): tangential force f_t (in the plane) and torsional moment tau about z through c with

    (||f_t|| / (mu F))^2 + (tau / tau_max)^2 <= 1,   tau_max = mu F mean_k ||rho_k - c||,

the mean over the patch's projected area of the in-plane distance from c (the pure-torsion limit
of uniform pressure). The grasp holds iff both jaws' wrenches can balance the object's weight
(`wrench.resist`, exact for the ellipsoids, no sampling of the limit surface; the jaws squeeze
with F, their net force along the closing axis is free and scales each jaw's limits).

Departures
----------
- The patch is a grid sampling of the object's surface within the footprint (0.5 mm cells),
  not REACH's constructive-solid-geometry intersection with barycentric integration, and the
  footprint is the simulated pad rather than REACH's hexagon.
- The original's configuration samples sliding directions and patch positions (`num_dir_smpls`
  200, `num_pos_smpls` 800 in `area_contact_generator.yaml`); here the ellipsoid's axes are the
  patch's closed-form pure-force and pure-torsion limits and the resistance check is exact.
- REACH also evaluates robustness under object-pose and friction perturbations; here the
  perturbation is the study's grasp-pose noise, the same for every model.
"""

from __future__ import annotations

import numpy as np

from ipcgrasp.baselines.interface import Prediction
from ipcgrasp.baselines.wrench import ContactWrenchSet, analytic_prediction, tangent_bases, wrenches

__all__ = ["contact_sets", "limit_surface", "predict"]


def limit_surface(points, projected_areas, direction, force: float, mu: float) -> tuple[np.ndarray, float, float]:
    """Planar uniform-pressure contact of `force` (N) over patch points (K, 3) (m) with projected
    areas (K,) (m^2) on the plane normal to the unit `direction`: (centre of pressure c (3,),
    tangential limit mu F (N), torsional limit tau_max = mu F sum_k a_k ||P (p_k - c)|| / sum_k a_k
    (N m), P the projection onto the plane)."""
    points = np.asarray(points, dtype=np.float64)
    areas = np.asarray(projected_areas, dtype=np.float64)
    direction = np.asarray(direction, dtype=np.float64)
    if len(points) == 0 or not areas.sum() > 0.0:
        raise ValueError("the patch needs at least one point with positive area")
    center = areas @ points / areas.sum()
    offsets = points - center
    in_plane = offsets - np.outer(offsets @ direction, direction)
    mean_distance = areas @ np.linalg.norm(in_plane, axis=1) / areas.sum()
    return center, mu * force, mu * force * float(mean_distance)


def contact_sets(contacts, params) -> list[ContactWrenchSet]:
    """Each jaw's REACH wrench set about the object's centre of mass (N, N m), for `contacts`
    (`GraspContacts` with both jaws hit) and `params` (mu, close_force)."""
    force = params.close_force
    sets = []
    for jaw in contacts.jaws:
        z = jaw.closing_direction
        center, tangential, torsional = limit_surface(jaw.patch_points, jaw.patch_projected_areas, z, force, params.mu)
        normal = wrenches(center, force * z, contacts.center_of_mass)[0]
        basis = tangent_bases(z)[0]
        friction = np.vstack([wrenches(np.tile(center, (2, 1)), tangential * basis.T, contacts.center_of_mass),
                              np.concatenate([np.zeros(3), torsional * z])[None, :]])
        sets.append(ContactWrenchSet(normal, (friction.T[None, :, :],)))
    return sets


def predict(obj, object_pose, grasp_pose, params, seed) -> Prediction:
    """REACH verdict on one trial (`interface.Prediction`; score = multiples of the object's
    weight the grasp resists)."""
    return analytic_prediction(contact_sets, obj, object_pose, grasp_pose, params, seed)
