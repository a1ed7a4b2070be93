"""The bytecode tracer: normalised bytecode -> symbolic interpretation -> graph + guards."""
