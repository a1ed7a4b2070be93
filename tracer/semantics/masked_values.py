"""Masked selections before they are made (`state.masked.MaskedValue`, ``z[m]``): element-wise
operators stay masked, and their dtype and rank are known; any other use of one is the break
at its read."""

from __future__ import annotations

from ..state import masked
from ..state.masked import MaskedValue
from ..values.arrays import ArrayMethod
from ..values.core import Const
from .protocol import Semantics, register


@register(MaskedValue)
class MaskedSemantics(Semantics):
    rank = 50  # before arrays: ``z[m] * x`` stays masked

    def binary(self, state, fn, a, b, name, reflected):
        return masked.binary(state, fn, a, b)

    def unary(self, state, fn, v, name):
        return masked.unary(state, fn, v)

    def truth(self, state, v):
        raise masked.escape(v)

    def get_attr(self, state, v, name, tx):  # its dtype and rank are known, not its length
        if name == "dtype":
            return Const(v.dtype)
        if name in masked.WHOLE_METHODS:  # ``x[m].sum()``: made in the graph when called
            return ArrayMethod(v, name)
        if name == "ndim":
            return Const(v.full.example.ndim - v.mask.example.ndim + 1)
        raise masked.escape(v)

    def iterate(self, state, v, taker, loop):
        raise masked.escape(v)
