"""One trace's state: the graph being built and what enters it.

trace_state    one trace's state and the calls every opcode handler makes on it
trace_budget   how far one trace may go before the frame runs eagerly
break_policy   what a graph break does where it happens (raise, or break)
wrapping       how pre-existing objects enter a trace (Inputs.wrap)
examples       the real values a trace computes with
graph_calls    operations entering the graph, run on the examples
effects        what an operation does besides its value (writes, views, risk)
masked         masked stores, z[m] = f(z[m]), without a break
data_sizes     sizes that come from data (x[mask], np.nonzero): known when the graph runs
guard_list     the assumptions one trace made, collected
guards         guards as one generated check function
side_effects   writes to state that existed before the call, replayed after the graph
contexts       context managers that survive graph breaks
"""
