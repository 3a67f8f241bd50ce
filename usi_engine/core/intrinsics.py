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


@intrinsic
def lowest_bit(typingctx, bits):
    """The index of the lowest set bit of a non-zero integer (LLVM's llvm.cttz, one
    instruction: tzcnt or bsf). The square loops over a bit set of occupied squares use it."""
    if not isinstance(bits, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        return builder.cttz(args[0], ir.Constant(ir.IntType(1), 1))  # 1: never called with 0

    return bits(bits), codegen


# --- int8 dot products: the network's affine layers -----------------------------------------
#
# numba's LLVM turns int16 x int8 loops into vpmaddwd at best; YaneuraOu multiplies the
# ClippedReLU's uint8 outputs by int8 weights 32 at a time (vpmaddubsw, then vpmaddwd by 1
# to int32). These intrinsics write that sequence for 32-byte chunks of a row. Products of
# 0..127 by -128..127 in pairs stay within int16, so vpmaddubsw never saturates and the sums
# equal the plain int32 ones. On a CPU with AVX-512 VNNI one instruction, vpdpbusd, does the
# three (uint8 x int8 products, four to an int32 lane, added to the lane without
# saturation): the same sums. On a CPU without AVX2 (or a numba target set without it) the
# same intrinsics emit portable vector IR that LLVM lowers for that CPU.

CHUNK = 32  # bytes of input per vector step

# the instruction sets the dot products are written for, best first
ISA_VNNI = "vnni"  # AVX-512 VNNI on 256-bit vectors (with AVX-512VL)
ISA_AVX2 = "avx2"
ISA_PORTABLE = "portable"


def _target_has(*features: str) -> bool:
    """Whether numba compiles for a CPU with all these LLVM features (the host's, unless
    NUMBA_CPU_NAME names another CPU)."""
    import llvmlite.binding as llvm
    from numba import config

    if config.CPU_NAME and config.CPU_NAME != "host":
        return all("+" + f in (config.CPU_FEATURES or "") for f in features)
    host = llvm.get_host_cpu_features()
    return all(bool(host.get(f)) for f in features)


def _target_has_avx2() -> bool:
    return _target_has("avx2")


def _target_has_vnni() -> bool:
    return _target_has("avx2", "avx512vnni", "avx512vl")


def target_isa(best: str = ISA_VNNI) -> str:
    """The best instruction set for the dot products, no better than `best`, that numba's
    target has."""
    if best == ISA_VNNI and _target_has_vnni():
        return ISA_VNNI
    if best in (ISA_VNNI, ISA_AVX2) and _target_has_avx2():
        return ISA_AVX2
    return ISA_PORTABLE


def _element_pointer(context, builder, array_type, array, offset, offset_type):
    ary = context.make_array(array_type)(context, builder, array)
    return builder.gep(ary.data, [context.cast(builder, offset, offset_type, types.intp)])


def _chunk(builder, base, offset):
    """The 32 bytes at base + offset as a vector (no alignment assumed)."""
    v32i8 = ir.VectorType(ir.IntType(8), CHUNK)
    ptr = builder.gep(base, [ir.Constant(ir.IntType(64), offset)])
    return builder.load(builder.bitcast(ptr, v32i8.as_pointer()), align=1)


def _accumulate(builder, isa):
    """acc(sum, x, w): `sum` (None for the first chunk) plus the products of a chunk, as a
    vector whose lanes add up to the chunk's dot product."""
    i8, i16, i32 = ir.IntType(8), ir.IntType(16), ir.IntType(32)
    v32i8, v16i16, v8i32 = ir.VectorType(i8, CHUNK), ir.VectorType(i16, 16), ir.VectorType(i32, 8)
    if isa == ISA_VNNI:
        dpbusd = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(v8i32, [v8i32, v8i32, v8i32]), "llvm.x86.avx512.vpdpbusd.256"
        )
        zero = ir.Constant(v8i32, [0] * 8)

        def acc(total, xv, wv):
            start = zero if total is None else total
            return builder.call(dpbusd, [start, builder.bitcast(xv, v8i32), builder.bitcast(wv, v8i32)])

        return acc
    if isa == ISA_AVX2:
        maddubs = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(v16i16, [v32i8, v32i8]), "llvm.x86.avx2.pmadd.ub.sw"
        )
        maddwd = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(v8i32, [v16i16, v16i16]), "llvm.x86.avx2.pmadd.wd"
        )
        ones = ir.Constant(v16i16, [1] * 16)

        def product(xv, wv):
            return builder.call(maddwd, [builder.call(maddubs, [xv, wv]), ones])
    else:
        v32i32 = ir.VectorType(i32, CHUNK)

        def product(xv, wv):
            return builder.mul(builder.zext(xv, v32i32), builder.sext(wv, v32i32))

    def acc(total, xv, wv):
        part = product(xv, wv)
        return part if total is None else builder.add(total, part)

    return acc


def _row_sums(builder, x, w, rows, length, isa):
    """One vector per row: partial sums of x . w[row] whose lanes add up to the dot product."""
    xs = [_chunk(builder, x, CHUNK * k) for k in range(length // CHUNK)]
    acc = _accumulate(builder, isa)
    sums = []
    for row in range(rows):
        total = None
        for k, xv in enumerate(xs):
            total = acc(total, xv, _chunk(builder, w, row * length + CHUNK * k))
        sums.append(total)
    return sums


def _reduce(builder, vector):
    width = vector.type.count
    i32 = ir.IntType(32)
    add = cgutils.get_or_insert_function(
        builder.module,
        ir.FunctionType(i32, [ir.VectorType(i32, width)]),
        f"llvm.vector.reduce.add.v{width}i32",
    )
    return builder.call(add, [vector])


def _dot4_typer(best, name):
    def typer(typingctx, x, x_off, w, w_off, length, out, out_off):
        if not isinstance(length, types.IntegerLiteral) or length.literal_value % CHUNK:
            return None  # a constant multiple of 32, so that the chunks unroll
        n = length.literal_value

        def codegen(context, builder, signature, args):
            ts = signature.args
            xp = _element_pointer(context, builder, ts[0], args[0], args[1], ts[1])
            wp = _element_pointer(context, builder, ts[2], args[2], args[3], ts[3])
            op = _element_pointer(context, builder, ts[5], args[5], args[6], ts[6])
            isa = target_isa(best)
            sums = _row_sums(builder, xp, wp, 4, n, isa)
            v4i32 = ir.VectorType(ir.IntType(32), 4)
            if isa != ISA_PORTABLE:  # four rows' lanes added pairwise, as YaneuraOu's haddx4
                v8i32 = ir.VectorType(ir.IntType(32), 8)
                hadd = cgutils.get_or_insert_function(
                    builder.module, ir.FunctionType(v8i32, [v8i32, v8i32]), "llvm.x86.avx2.phadd.d"
                )
                both = builder.call(
                    hadd, [builder.call(hadd, [sums[0], sums[1]]), builder.call(hadd, [sums[2], sums[3]])]
                )
                low = builder.shuffle_vector(both, both, ir.Constant(v4i32, [0, 1, 2, 3]))
                high = builder.shuffle_vector(both, both, ir.Constant(v4i32, [4, 5, 6, 7]))
                total = builder.add(low, high)
            else:
                total = ir.Constant(v4i32, ir.Undefined)
                for row, s in enumerate(sums):
                    total = builder.insert_element(
                        total, _reduce(builder, s), ir.Constant(ir.IntType(32), row)
                    )
            builder.store(total, builder.bitcast(op, v4i32.as_pointer()), align=4)
            return context.get_dummy_value()

        return types.void(x, x_off, w, w_off, length, out, out_off), codegen

    typer.__name__ = typer.__qualname__ = name  # numba names the intrinsic after it
    return typer


def _dot_typer(best, name):
    def typer(typingctx, x, x_off, w, w_off, length):
        if not isinstance(length, types.IntegerLiteral) or length.literal_value % CHUNK:
            return None
        n = length.literal_value

        def codegen(context, builder, signature, args):
            ts = signature.args
            xp = _element_pointer(context, builder, ts[0], args[0], args[1], ts[1])
            wp = _element_pointer(context, builder, ts[2], args[2], args[3], ts[3])
            (s,) = _row_sums(builder, xp, wp, 1, n, target_isa(best))
            return _reduce(builder, s)

        return types.int32(x, x_off, w, w_off, length), codegen

    typer.__name__ = typer.__qualname__ = name
    return typer


# dot4_u8_i8(x, x_off, w, w_off, N, out, out_off): out[out_off + r] = x[x_off : x_off + N] .
# w[w_off + r*N : w_off + (r+1)*N] for the four rows r (int32, wrapping); x uint8, w int8,
# N a constant multiple of 32.  dot_u8_i8(x, x_off, w, w_off, N) returns one such sum.
# Each is written for the best instruction set the CPU has (target_isa).
dot4_u8_i8 = intrinsic(_dot4_typer(ISA_VNNI, "dot4_u8_i8"))
dot_u8_i8 = intrinsic(_dot_typer(ISA_VNNI, "dot_u8_i8"))
# the same with no better than AVX2, and with no x86 instruction at all, whatever the CPU:
# the tests compare all three
dot4_u8_i8_avx2 = intrinsic(_dot4_typer(ISA_AVX2, "dot4_u8_i8_avx2"))
dot_u8_i8_avx2 = intrinsic(_dot_typer(ISA_AVX2, "dot_u8_i8_avx2"))
dot4_u8_i8_portable = intrinsic(_dot4_typer(ISA_PORTABLE, "dot4_u8_i8_portable"))
dot_u8_i8_portable = intrinsic(_dot_typer(ISA_PORTABLE, "dot_u8_i8_portable"))


# --- passing the position and the context by reference ---------------------------------------
#
# numba passes a tuple of arrays to a function it does not inline as every field of every
# array, one argument each: the position and the search context, 49 arrays, are about 400
# words that each call of `search`, `qsearch` or `picker_next` pushed on the stack. by_ref
# stores such a value once in the caller's frame and hands on its address; deref reads it
# back at the callee's top, field by field, so that LLVM keeps only the fields the callee
# uses.


@intrinsic
def by_ref(typingctx, value):
    """The address of a copy of `value` in the caller's stack frame (one slot per call site,
    reserved at the function's entry)."""

    def codegen(context, builder, signature, args):
        slot = cgutils.alloca_once(builder, context.get_data_type(signature.args[0]))
        builder.store(context.data_model_manager[signature.args[0]].as_data(builder, args[0]), slot)
        return slot

    return types.CPointer(value)(value), codegen


def _load_fields(builder, pointer):
    """The value at `pointer`, loaded one scalar field at a time."""
    pointee = pointer.type.pointee
    if not isinstance(pointee, (ir.LiteralStructType, ir.ArrayType)):
        return builder.load(pointer)
    count = len(pointee.elements) if isinstance(pointee, ir.LiteralStructType) else pointee.count
    value = ir.Constant(pointee, ir.Undefined)
    zero = ir.Constant(ir.IntType(32), 0)
    for i in range(count):
        field = builder.gep(pointer, [zero, ir.Constant(ir.IntType(32), i)], inbounds=True)
        value = builder.insert_value(value, _load_fields(builder, field), i)
    return value


@intrinsic
def deref(typingctx, pointer):
    """The value a by_ref pointer points to."""
    if not isinstance(pointer, types.CPointer):
        return None

    def codegen(context, builder, signature, args):
        data = _load_fields(builder, args[0])
        return context.data_model_manager[signature.return_type].from_data(builder, data)

    return pointer.dtype(pointer), codegen
