"""6DFC: non-planar area contact with a 6-D friction set (Jingyi Xu et al., "6DFC: Efficiently
Planning Soft Non-Planar Area Contact Grasps using 6D Friction Cones", ICRA 2020, the thesis's
reference [45]).

What is implemented
-------------------
For each jaw, the contact patch is the object surface within the pad footprint and within the
silicone depth of first contact (`contacts.jaw_contact`), discretised into surface elements, one
per 0.5 mm footprint cell. The pad is advanced the silicone depth past first contact; element k's
penetration depth d_k is how far the undeformed pad reaches into the object there along the
closing direction z. The pad's column over the element's cell (area A_k) is a linear spring: it
presses with N_k = c d_k A_k, along the element's inward normal -n_k (non-planar contact: the
normals vary over the patch), c set so that the resultant along z is the closing force F:
sum_k N_k |n_k . z| = F. Element k's Coulomb friction is any tangential force of magnitude
<= mu N_k. The jaw's friction wrench set, in all six dimensions, is the Minkowski sum of the
elements' friction discs mapped to wrenches about the centre of mass; its boundary is the 6-D
limit surface, whose point for a sliding twist (v, omega) is the sum of the per-element Coulomb
forces -mu N_k u_k / ||u_k||, u_k the tangential part of the velocity v + omega x r_k of element
k. The grasp holds iff both jaws' wrenches can balance the object's weight.

The limit surface is sampled at the sliding twists the wrench solver's LP asks for (column
generation, `wrench.resist`), not at a fixed set of twists and not through an ellipsoid fit: the
resistance check is then exact for the discretised patch (to 1e-4 of the load factor), where 6DFC
fits a 6-D ellipsoid to sampled twists and linearises the cone it spans.

Departures
----------
- The jaws squeeze with F (their net force along the closing axis is free, `wrench`), so the 6-D
  friction cone enters at that normal load: a bounded set scaled with the jaw's normal force, as
  for the other analytic models of the study.
- Pressure from the rigid penetration of the undeformed pad into the object (a Winkler
  foundation of columns along the closing direction) rather than from a deformation model of the
  pad; the silicone depth is REACH's. Per unit footprint area the column force does not depend on
  the surface's tilt, so surfaces met at a grazing angle do not get unbounded normal forces.
"""

from __future__ import annotations

import numpy as np

from ipcgrasp.baselines.interface import Prediction
from ipcgrasp.baselines.wrench import ContactWrenchSet, analytic_prediction, disc_blocks, wrenches

__all__ = ["contact_sets", "element_normal_forces", "predict"]


def element_normal_forces(depths, projected_areas, normals, direction, force: float) -> np.ndarray:
    """Normal force N_k = c d_k A_k (N) of each element: penetration depths (K,) (m) times the
    footprint cell areas (K,) (m^2), c such that sum_k N_k |n_k . direction| = `force` (N) for the
    unit normals (K, 3) and the closing `direction` (3,). Equal depths when every depth is zero."""
    depths = np.asarray(depths, dtype=np.float64)
    projected_areas = np.asarray(projected_areas, dtype=np.float64)
    if np.any(depths < 0.0):
        raise ValueError("penetration depths must be non-negative")
    if not np.any(depths > 0.0):
        depths = np.ones_like(depths)
    springs = depths * projected_areas
    along = springs @ np.abs(np.asarray(normals, dtype=np.float64) @ np.asarray(direction, dtype=np.float64))
    if not along > 0.0:
        raise ValueError("the patch has no area facing the closing direction")
    return force * springs / along


def contact_sets(contacts, params) -> list[ContactWrenchSet]:
    """Each jaw's 6DFC wrench set about the object's centre of mass (N, N m), for `contacts`
    (`GraspContacts` with both jaws hit) and `params` (mu, close_force)."""
    sets = []
    for jaw in contacts.jaws:
        normal_forces = element_normal_forces(jaw.patch_depths, jaw.patch_projected_areas, jaw.patch_normals,
                                              jaw.closing_direction, params.close_force)
        inward = -jaw.patch_normals
        normal = wrenches(jaw.patch_points, normal_forces[:, None] * inward, contacts.center_of_mass).sum(axis=0)
        sets.append(ContactWrenchSet(normal, (
            disc_blocks(jaw.patch_points, inward, params.mu * normal_forces, contacts.center_of_mass),)))
    return sets


def predict(obj, object_pose, grasp_pose, params, seed) -> Prediction:
    """6DFC verdict on one trial (`interface.Prediction`; score = multiples of the object's
    weight the grasp resists)."""
    return analytic_prediction(contact_sets, obj, object_pose, grasp_pose, params, seed)
