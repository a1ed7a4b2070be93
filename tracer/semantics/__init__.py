"""Python's semantics on symbolic values: what an operation means for each kind of value.

operations         operators, truth, attributes, items, iteration
builtins_impl      Python builtins
container_methods  methods of containers and constants (lst.append, d.get...)
user_objects       the user's objects and their protocols (__getattribute__, descriptors...)
iteration          what a for loop iterates over, as items made from their position
"""
