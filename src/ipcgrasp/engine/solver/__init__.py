"""The parts of the time-step solver that `engine.simulation.Simulation` puts together, one job
per module: settings (options, step report, failure, tuning constants), state (what evolves),
model (the scene's fixed description: bodies, layout of the unknowns, collision mesh, mass),
dofs (the unknowns z and their maps to the bodies' and the contact surface's positions),
proximity (broad-phase candidates and their cache), contact_model (barrier and penalty contact
behind one interface), barrier_stiffness (the adaptive kappa), potential (the incremental
potential's value, gradient and Hessian), hessian (the Hessian's persistent sparse pattern and
its fixed parts), assembly (the kernels that assemble into that pattern), factorisation (its
LDL^T), line_search (admissible step fractions, backtracking, extrapolation), newton (the Newton
solve, step acceptance and report), balance (the net force and torque left on each affine body), drive (the drivers' targets and the elastic coupling of
driven motion), drive_round (one round of the drive-and-settle continuation) and warm_start (a
moving step's guess of where it ends)."""
