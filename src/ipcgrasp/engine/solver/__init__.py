"""The parts of the time-step solver that `engine.simulation.Simulation` puts together, one job
per module: settings (options, step report, failure, tuning constants) and state (what evolves)."""
