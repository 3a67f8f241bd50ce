"""Machine instructions that numba has no word for, as numba intrinsics (LLVM IR written at
the call site, so they inline, cache and cost nothing beyond the instruction)."""

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


@intrinsic
def prefetch_row(typingctx, array, row):
    """Ask the CPU to bring the cache line holding `array[row, 0, ...]` close (LLVM's
    llvm.prefetch: read, keep in every cache level). A hint: no effect on any result."""
    if not isinstance(array, types.Array) or not isinstance(row, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        array_type = signature.args[0]
        ary = context.make_array(array_type)(context, builder, args[0])
        zero = context.get_constant(types.intp, 0)
        index = [context.cast(builder, args[1], signature.args[1], types.intp)]
        index += [zero] * (array_type.ndim - 1)
        ptr = cgutils.get_item_pointer2(
            context,
            builder,
            data=ary.data,
            shape=cgutils.unpack_tuple(builder, ary.shape),
            strides=cgutils.unpack_tuple(builder, ary.strides),
            layout=array_type.layout,
            inds=index,
        )
        i8_ptr = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        prefetch = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [i8_ptr, i32, i32, i32]), "llvm.prefetch.p0"
        )
        # read (0), highest locality (3), data cache (1)
        builder.call(prefetch, [builder.bitcast(ptr, i8_ptr), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return types.void(array, row), codegen
