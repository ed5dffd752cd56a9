"""The parts of the time-step solver that `engine.simulation.Simulation` puts together, one job
per module: settings (options, step report, failure, tuning constants), state (what evolves) and
dofs (the unknowns z and their maps to the bodies' positions)."""
