"""The parts of the time-step solver that `engine.simulation.Simulation` puts together, one job
per module: settings (options, step report, failure, tuning constants), state (what evolves),
dofs (the unknowns z and their maps to the bodies' and the contact surface's positions),
proximity (broad-phase candidates and their cache), line_search (admissible step fractions,
backtracking, extrapolation), assembly (the kernels that assemble the Hessian into its sparse
pattern), contact_model (barrier and penalty contact behind one interface) and drive (the
drivers' targets and the elastic coupling of driven motion)."""
