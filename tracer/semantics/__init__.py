"""Python's semantics on symbolic values: what an operation means for each kind of value.

operations         the entry points: operators, truth, attributes, items, iteration
protocol           one `Semantics` per value family, registered by value class; Python's
                   rule for binary operators
folding            what the families share: constants folded, dynamic ints pinned
numbers            dynamic ints and floats, and text made of them
arrays             NumPy arrays and scalars of the graph, ``arr.flags``
containers         tuples, lists, dicts, sets, ranges, iterators over known items
objects            constants, known objects, the user's objects, functions, ``super()``
masked_values      masked selections (``z[m]``) before they are made
builtins_impl      Python builtins
container_methods  methods of containers and constants (lst.append, d.get...)
user_objects       the user's objects and their protocols (__getattribute__, descriptors...)
iteration          what a for loop iterates over, as items made from their position
"""
