"""Soft point contact model (soft-finger contact; Bicchi and Kumar's survey, the "Soft Point"
row of Table 4.2 in Kim et al., IPC-GraspSim).

What is implemented
-------------------
One contact per jaw, at the centre of the patch its pad touches (`contacts.JawContact`: the object
surface within the footprint and the silicone depth of first contact), i.e. the footprint-area-
weighted centroid of the patch points, with the patch's area-weighted mean normal n (outward; the
jaw pushes along -n). The normal force is the closing force F (`params.close_force`, 20 N).
Friction: a Coulomb disc ||f_t|| <= mu F in the tangent plane (the cone at fixed normal force)
and, independently, a torsional moment |tau| <= tau_max about n, with tau_max = (2/3) mu F a:
uniform pressure over a disc of contact radius a = 10 mm (REACH's `radius`, docs/data.md),
the classical linear soft-finger model. The grasp holds iff both contacts' wrenches can balance
the object's weight (`wrench.resist`; the jaws squeeze with F, their net force along the closing
axis is free).

The cone is not linearised with a fixed number of facets: the wrench solver generates the disc's
boundary points it needs (support points in the directions its LP asks for), which is exact up to
the solver's tolerance (1e-4 of the load factor), i.e. a linearisation with as many facets as the
answer needs (a handful per disc on the test grasps).

Departures
----------
- The contact is the patch's centre, not "the footprint point that touches first": under the
  rotation noise a flat face touches first at a corner of the footprint, which would put the two
  contacts up to a pad width apart and let the squeeze itself twist the object. The grasp axis
  (Dex-Net's parallel-jaw contacts) is no better on the recorded cube grasps, whose tooltip
  origins sit within a fraction of a millimetre of the cube's top edge (only the pad's rounded
  tip overlaps the cube), so the axis hits or misses the cube with the noise.
- Normal force F along the contact normal even where the surface is tilted against the jaw.
"""

from __future__ import annotations

import numpy as np

from ipcgrasp.baselines.interface import Prediction
from ipcgrasp.baselines.wrench import ContactWrenchSet, analytic_prediction, disc_blocks, torsion_blocks, wrenches

__all__ = ["CONTACT_RADIUS", "contact_sets", "predict", "torsional_friction_limit"]

CONTACT_RADIUS = 10e-3
"""Radius (m) of the soft contact's pressure disc (REACH `area_contact_generator.yaml`)."""


def torsional_friction_limit(mu: float, force: float, radius: float = CONTACT_RADIUS) -> float:
    """Largest torsional friction moment (N m) of a disc of `radius` (m) pressed with `force` (N)
    at uniform pressure: tau_max = integral of mu p r dA = (2/3) mu F a."""
    return 2.0 / 3.0 * mu * force * radius


def contact_sets(contacts, params, radius: float = CONTACT_RADIUS) -> list[ContactWrenchSet]:
    """Each jaw's soft point contact wrench set about the object's centre of mass (N, N m), for
    `contacts` (`GraspContacts` with both jaws hit) and `params` (mu, close_force)."""
    force, mu = params.close_force, params.mu
    sets = []
    for jaw in contacts.jaws:
        weights = jaw.patch_projected_areas / jaw.patch_projected_areas.sum()
        point = weights @ jaw.patch_points
        inward = -(weights @ jaw.patch_normals)
        inward /= np.linalg.norm(inward)
        normal = wrenches(point, force * inward, contacts.center_of_mass)[0]
        sets.append(ContactWrenchSet(normal, (
            disc_blocks(point, inward, mu * force, contacts.center_of_mass),
            torsion_blocks(inward, torsional_friction_limit(mu, force, radius)))))
    return sets


def predict(obj, object_pose, grasp_pose, params, seed) -> Prediction:
    """Soft point contact verdict on one trial (`interface.Prediction`; score = multiples of the
    object's weight the grasp resists)."""
    return analytic_prediction(contact_sets, obj, object_pose, grasp_pose, params, seed)
