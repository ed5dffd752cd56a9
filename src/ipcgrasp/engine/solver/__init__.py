"""The parts of the time-step solver that `engine.simulation.Simulation` puts together, one job
per module: settings (options, step report, failure, tuning constants), state (what evolves),
model (the scene's fixed description: bodies, layout of the unknowns, collision mesh, mass),
dofs (the unknowns z and their maps to the bodies' and the contact surface's positions),
proximity (broad-phase candidates and their cache), contact_model (barrier and penalty contact
behind one interface), barrier_stiffness (the adaptive kappa), potential (the incremental
potential's value, gradient and Hessian), hessian (the Hessian's persistent sparse pattern and
its fixed parts), assembly (the kernels that assemble into that pattern), factorisation (its
LDL^T), line_search (admissible step fractions, backtracking, extrapolation), newton (the Newton
solve, step acceptance and report), balance (the net force and torque left on each affine
body), drive (the drivers' targets and the elastic coupling of
driven motion), drive_round (one round of the drive-and-settle continuation), warm_start (a
moving step's guess of where it ends) and queries (contacts and distances between given bodies,
for the grasp layer).

How a step uses them (the physics: docs/physics.md). Each step minimises, over the free
degrees of freedom z (free deformable vertex coordinates and the 12 affine coordinates of each
affine body),

    E(z) = 1/2 (z - z~)^T M (z - z~) + h^2 (Psi(z) + V_ortho(z)) + kappa B(x(z)) + D(x(z))

with z~ = z_t + h v_t + h^2 a_gravity, B the summed log barrier over active contacts, D the
lagged smoothed friction (normal forces and tangent bases from the start of the step), and
x(z) = P z + c the contact-surface vertex positions (P constant, c the driven vertices).
Projected Newton with a sparse direct solve (near convergence with the barrier Hessians
unprojected while the Hessian stays positive definite); the line search clips the step by CCD,
then by tet inversion, then backtracks on E. Every accepted configuration is intersection-free.

Driven motion (prescribed vertices, kinematic bodies) is imposed in one of two ways per step:
a warm start (warm_start: drivers at their targets, driven pads moved with them, affine bodies
carried on at their velocity, taken when CCD, tet inversion and a distance floor admit the
straight motion to it), or else the drive-and-settle continuation (drive_round, then newton, up
to MAX_DRIVE_ROUNDS rounds). Both start the same Newton solve.

With SolverSettings.contact_model = "penalty" the barrier is replaced by the BLEM penalty
potential of engine.penalty (h^2 times its energy, lagged friction with penalty normal forces,
optional k-means contact clusters): discrete collision detection only, i.e. no CCD in the line
search or the drive and no adaptive stiffness; the tet non-inversion limit and the energy
backtracking stay. Newton uses the penalty's Gauss-Newton Hessian, and a full step that lowers
E by more than 1.5 times its quadratic model predicts is doubled while E keeps falling (contacts
leaving the layers or sliding round an edge have less curvature than the PSD model). With
clustering a step takes at least two passes. Either way every step reports the actual
interpenetration (engine.penetration) and the largest gap at which a contact force acted.

The Hessian's upper triangle is assembled straight into a CSC pattern that is kept while the
contacts couple no new degrees of freedom (per-entry slots for the fixed parts, contact
Hessians carried into z through per-coordinate maps of P; a pattern that grows carries its
fixed entries' slots and assembled values into the new one), and factored by qdldl's LDL^T
(engine.ldlt: its C routines called from numba), whose ordering and symbolic analysis are
reused while the pattern stays (against SciPy's SuperLU: 0.3 ms against 1.8 ms per solve at
700 DOFs). A contact's Hessian block is contracted onto the degrees of freedom it depends on
before it enters the pattern (an affine body's 12 coordinates rather than 16 z entries per
x-space entry), and a tet's elastic Hessian is reused while its deformation gradient stays
within ELASTIC_HESSIAN_REUSE of where it was computed (benchmarks/bench_trial.py measures
both). A warm start's forced first Newton step is tried with the factorisation where the last
step ended, which then also tests convergence (CARRIED_MODEL, CARRIED_CONVERGED): a lift step
mostly assembles no Hessian; with the drivers at rest it serves the drive's predictor. A
contact's barrier Hessian is projected to PSD on its column space, 5 of 12 dimensions for most
contacts (engine.barrier). Broad-phase pairs are kept while the contact surface stays within
PAIR_CACHE_SLACK dhat of where they were found and re-tested box by box (proximity), and a
drive round that starts where the last Newton solve converged reuses that solve's gradient and
factorisation. All three give the same iterates as the plain computation up to rounding.

The inner loop calls the kernels of engine.neohookean, engine.broadphase and engine.ccd
directly: their inputs are the simulation's own arrays (validated once, at construction), and
per-call validation would cost about as much as the kernels."""
