"""The backend-neutral half of the kernel backends: a graph lowered to loop-level kernels,
fused, and run as a plan. Triton (`tcompile.backend.triton`) and the CPU backend
(`tcompile.backend.cpu`) each add only a code generator and a device, through `target`.

  graph (tracer IR, canonical ops)
    -> `lowering`   nodes to loop-level expressions (`loop_ir.Expr`) by a rule per NumPy
                    callable or kind, asking the target which dtypes and ufunc loops its
                    kernels compute (NumPy's own loops: `dtypes`); what cannot be lowered
                    becomes an extern step (run by NumPy, marked in the report)
    -> `fusion`     expressions grouped into kernels (`loop_ir.Kernel`); `can_fuse` says why
                    two groups stay apart
    -> `plan`       the steps one call runs (launch, extern, library call, loop...), each
                    running and describing itself; values are `tensors` over buffers
    -> `runtime`    per call: the inputs on the target's device, the plan for their layouts,
                    each kernel compiled once by ``target.compile``; NumPy in and out

`host_nodes` runs graph nodes on the host for extern steps. Nothing here imports torch, Triton
or numba: the targets do.
"""
