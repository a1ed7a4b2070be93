"""Symbolic values: what the tracer's stack and locals hold, one class per kind of Python value.

`source` says where a pre-existing value was read from (for guards, and for rebuilding it
after the graph ran). Each value answers for itself what the rest of the tracer asks of every
value (`core.Value`: its constant, its graph argument, its text in the glue).

  core        Value; Const (a constant known at trace time), Obj (a known object used by
              identity: module, function, class, dtype, ufunc); NULL and UNBOUND
  arrays      GraphValue: ArrayValue (an ndarray computed by or fed into the graph),
              ScalarValue (a NumPy scalar), SymInt (a dynamic size), SymFloat (a dynamic
              float argument); ArrayMethod (``arr.sum`` before the call), ArrayFlags
  containers  TupleValue, ListValue, DictValue, SetValue, SliceValue, ConstMethod
              (``"a,b".split``), Iterator (over known items: loops are unrolled)
  functions   UserFunction (a function to inline), Cell (a closure cell), ContextManager
              and ContextExit (the supported with-blocks)
  objects     UserObject (an instance of a user class), BoundMethod, SuperValue
"""
