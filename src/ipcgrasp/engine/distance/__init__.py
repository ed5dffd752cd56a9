"""Squared distances between contact primitives, with gradients and Hessians.

Every distance here is a *squared* Euclidean distance (m^2), as in Incremental Potential
Contact (Li et al. 2020, "Incremental Potential Contact: Intersection- and Inversion-free,
Large-Deformation Dynamics", ACM TOG 39(4)) and the IPC Toolkit, whose names, argument
orders and closest-feature rules this package follows one to one (checked against ipctk 1.6.1).
Gradients are flat vectors over the vertices in argument order, x, y, z per vertex (m);
Hessians are the matching square matrices (dimensionless).

Point-edge, point-triangle and edge-edge distances first classify which features are closest
(the ``*_distance_type`` functions) and then evaluate the smooth formula of that sub-case:
point-point |a - b|^2, point-line |(p - e0) x (e1 - e0)|^2 / |e1 - e0|^2, and the
"normal" distance g^2 / h with g = w . (u x v), h = |u x v|^2 (point-plane: u, v two triangle
edges and w = p - t0; line-line: u, v the edge directions and w = eb0 - ea0). Derivatives are
derived analytically in the difference vectors (u, v, w) and scattered to the vertices.

Kernels ``_name`` take 3-vectors as separate float64 arrays and are callable from other
``@njit`` code; the public ``name`` wrappers validate and convert their inputs.

One module per job, as ipctk's distance/ directory: distance_type (the closest-feature
classification and the constants kernels pass), point_point, point_line, normal_distance (the
g^2 / h formula shared by point-plane and line-line), point_edge, point_triangle, edge_edge
(with line-line), point_plane, edge_edge_mollifier (the mollifier of nearly parallel edges);
vector (tuple arithmetic of the kernels) and inputs (the wrappers' argument checks) serve them.
"""

from ipcgrasp.engine.distance.distance_type import (
    _EE_EA0_EB,
    _EE_EA0_EB1,
    _EE_EA1_EB0,
    _EE_EA1_EB1,
    _EE_EA_EB,
    _EE_EA_EB0,
    _EE_EA_EB1,
    _PT_P_E0,
    _PT_P_E2,
    _PT_P_T,
    _PT_P_T2,
    EDGE_EDGE_PARALLEL_THRESHOLD,
    EdgeEdgeDistanceType,
    PointEdgeDistanceType,
    PointTriangleDistanceType,
    _edge_edge_distance_type,
    _point_triangle_distance_type,
    edge_edge_distance_type,
    edge_edge_parallel_distance_type,
    point_edge_distance_type,
    point_triangle_distance_type,
)
from ipcgrasp.engine.distance.edge_edge import (
    _edge_edge_distance,
    _edge_edge_distance_gradient,
    _edge_edge_distance_gradient_of_type,
    _edge_edge_distance_hessian,
    _edge_edge_distance_hessian_of_type,
    _edge_edge_distance_of_type,
    edge_edge_distance,
    edge_edge_distance_gradient,
    edge_edge_distance_hessian,
    line_line_distance,
    line_line_distance_gradient,
    line_line_distance_hessian,
)
from ipcgrasp.engine.distance.edge_edge_mollifier import (
    EDGE_EDGE_MOLLIFIER_THRESHOLD_SCALE,
    _edge_edge_cross_squarednorm,
    _edge_edge_mollifier,
    _edge_edge_mollifier_gradient,
    _edge_edge_mollifier_hessian,
    _edge_edge_mollifier_threshold,
    edge_edge_cross_squarednorm,
    edge_edge_cross_squarednorm_gradient,
    edge_edge_cross_squarednorm_hessian,
    edge_edge_mollifier,
    edge_edge_mollifier_gradient,
    edge_edge_mollifier_hessian,
    edge_edge_mollifier_threshold,
    mollifier,
    mollifier_first_derivative,
    mollifier_second_derivative,
)
from ipcgrasp.engine.distance.point_edge import (
    _point_edge_distance,
    _point_edge_distance_hessian,
    point_edge_distance,
    point_edge_distance_gradient,
    point_edge_distance_hessian,
)
from ipcgrasp.engine.distance.point_line import (
    _point_line_distance,
    _point_line_distance_gradient,
    _point_line_distance_hessian,
    point_line_distance,
    point_line_distance_gradient,
    point_line_distance_hessian,
)
from ipcgrasp.engine.distance.point_plane import (
    _point_plane_distance,
    _point_plane_distance_gradient,
    _point_plane_distance_hessian,
    point_plane_distance,
    point_plane_distance_gradient,
    point_plane_distance_hessian,
)
from ipcgrasp.engine.distance.point_point import (
    _point_point_distance,
    _point_point_distance_gradient,
    _point_point_distance_hessian,
    point_point_distance,
    point_point_distance_gradient,
    point_point_distance_hessian,
)
from ipcgrasp.engine.distance.point_triangle import (
    _point_triangle_distance,
    _point_triangle_distance_gradient,
    _point_triangle_distance_gradient_of_type,
    _point_triangle_distance_hessian,
    _point_triangle_distance_hessian_of_type,
    _point_triangle_distance_of_type,
    point_triangle_distance,
    point_triangle_distance_gradient,
    point_triangle_distance_hessian,
)

__all__ = [
    "EDGE_EDGE_MOLLIFIER_THRESHOLD_SCALE",
    "EDGE_EDGE_PARALLEL_THRESHOLD",
    "EdgeEdgeDistanceType",
    "PointEdgeDistanceType",
    "PointTriangleDistanceType",
    "edge_edge_cross_squarednorm",
    "edge_edge_cross_squarednorm_gradient",
    "edge_edge_cross_squarednorm_hessian",
    "edge_edge_distance",
    "edge_edge_distance_gradient",
    "edge_edge_distance_hessian",
    "edge_edge_distance_type",
    "edge_edge_mollifier",
    "edge_edge_mollifier_gradient",
    "edge_edge_mollifier_hessian",
    "edge_edge_mollifier_threshold",
    "edge_edge_parallel_distance_type",
    "line_line_distance",
    "line_line_distance_gradient",
    "line_line_distance_hessian",
    "mollifier",
    "mollifier_first_derivative",
    "mollifier_second_derivative",
    "point_edge_distance",
    "point_edge_distance_gradient",
    "point_edge_distance_hessian",
    "point_edge_distance_type",
    "point_line_distance",
    "point_line_distance_gradient",
    "point_line_distance_hessian",
    "point_plane_distance",
    "point_plane_distance_gradient",
    "point_plane_distance_hessian",
    "point_point_distance",
    "point_point_distance_gradient",
    "point_point_distance_hessian",
    "point_triangle_distance",
    "point_triangle_distance_gradient",
    "point_triangle_distance_hessian",
    "point_triangle_distance_type",
]

# Private kernels and constants that other engine modules (and tests) import
__all__ += [
    "_EE_EA0_EB",
    "_EE_EA0_EB1",
    "_EE_EA1_EB0",
    "_EE_EA1_EB1",
    "_EE_EA_EB",
    "_EE_EA_EB0",
    "_EE_EA_EB1",
    "_PT_P_E0",
    "_PT_P_E2",
    "_PT_P_T",
    "_PT_P_T2",
    "_edge_edge_cross_squarednorm",
    "_edge_edge_distance",
    "_edge_edge_distance_gradient",
    "_edge_edge_distance_gradient_of_type",
    "_edge_edge_distance_hessian",
    "_edge_edge_distance_hessian_of_type",
    "_edge_edge_distance_of_type",
    "_edge_edge_distance_type",
    "_edge_edge_mollifier",
    "_edge_edge_mollifier_gradient",
    "_edge_edge_mollifier_hessian",
    "_edge_edge_mollifier_threshold",
    "_point_edge_distance",
    "_point_edge_distance_hessian",
    "_point_line_distance",
    "_point_line_distance_gradient",
    "_point_line_distance_hessian",
    "_point_plane_distance",
    "_point_plane_distance_gradient",
    "_point_plane_distance_hessian",
    "_point_point_distance",
    "_point_point_distance_gradient",
    "_point_point_distance_hessian",
    "_point_triangle_distance",
    "_point_triangle_distance_gradient",
    "_point_triangle_distance_gradient_of_type",
    "_point_triangle_distance_hessian",
    "_point_triangle_distance_hessian_of_type",
    "_point_triangle_distance_of_type",
    "_point_triangle_distance_type",
]
