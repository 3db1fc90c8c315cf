// A layer loop (lax.scan, fori_loop) whose body holds the function's peak is
// split inside the body: the chunked loop nests in the layer loop, which
// keeps its carried state whole. The loop-invariant masks that jax hoists
// out of a scan and carries through it are recomputed in the body first
// (Split/SinkInvariants.cpp), so they are chunked like any iota-derived
// value instead of pinning the split dimension whole.
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=200KB})' | FileCheck %s
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=200KB})' | FileCheck %s --check-prefix=NOBIG
// No [256, 256] value is left anywhere: neither the scores nor the carried
// masks and fill value.
// NOBIG-NOT: tensor<256x256x

// A causal mask from iotas and a broadcast fill value, carried unchanged by
// the layer loop: the loop now carries the counter and the state only, and
// the split loop in its body (by query rows) builds each chunk's mask from
// iotas, the rows' offset by the chunk's start.
// CHECK-LABEL: func.func public @hoisted_mask
// CHECK:       "stablehlo.while"(%{{.*}}, %arg0) ({
// CHECK:       ^bb0(%{{.*}}: tensor<i32>, %{{.*}}: tensor<256x16xf32>):
// CHECK:         "stablehlo.while"
// CHECK:         %[[ROW:.*]] = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<64x256xi32>
// CHECK:         %[[START:.*]] = "stablehlo.add"(%[[ROW]],
// CHECK:         %[[COL:.*]] = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<64x256xi32>
// CHECK:         "stablehlo.compare"(%[[START]], %[[COL]]) {{.*}}comparison_direction GE
// CHECK:         "stablehlo.exponential"{{.*}}-> tensor<64x256xf32>
// CHECK:       memfit.split = {{{.*}}dim = 0 : i64
// CHECK:       "stablehlo.return"(%{{.*}}, %{{.*}}) : (tensor<i32>, tensor<256x16xf32>) -> ()
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<256x16xf32>) -> tensor<256x16xf32>, sym_name = "hoisted_mask", sym_visibility = "public"}> ({
  ^bb0(%x: tensor<256x16xf32>):
    %r = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<256x256xi32>
    %c = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<256x256xi32>
    %mask = "stablehlo.compare"(%r, %c) <{comparison_direction = #stablehlo<comparison_direction GE>, compare_type = #stablehlo<comparison_type SIGNED>}> : (tensor<256x256xi32>, tensor<256x256xi32>) -> tensor<256x256xi1>
    %f = "stablehlo.constant"() <{value = dense<-1.0e+09> : tensor<f32>}> : () -> tensor<f32>
    %fill = "stablehlo.broadcast_in_dim"(%f) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<256x256xf32>
    %i0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %w:4 = "stablehlo.while"(%i0, %x, %mask, %fill) ({
    ^bb0(%i: tensor<i32>, %h: tensor<256x16xf32>, %m: tensor<256x256xi1>, %fl: tensor<256x256xf32>):
      %n = "stablehlo.constant"() <{value = dense<4> : tensor<i32>}> : () -> tensor<i32>
      %lt = "stablehlo.compare"(%i, %n) <{comparison_direction = #stablehlo<comparison_direction LT>, compare_type = #stablehlo<comparison_type SIGNED>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%lt) : (tensor<i1>) -> ()
    }, {
    ^bb0(%i: tensor<i32>, %h: tensor<256x16xf32>, %m: tensor<256x256xi1>, %fl: tensor<256x256xf32>):
      %s = "stablehlo.dot_general"(%h, %h) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>}> : (tensor<256x16xf32>, tensor<256x16xf32>) -> tensor<256x256xf32>
      %sm = "stablehlo.select"(%m, %s, %fl) : (tensor<256x256xi1>, tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
      %e = "stablehlo.exponential"(%sm) : (tensor<256x256xf32>) -> tensor<256x256xf32>
      %z = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
      %sum = "stablehlo.reduce"(%e, %z) <{dimensions = array<i64: 1>}> ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %t = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%t) : (tensor<f32>) -> ()
      }) : (tensor<256x256xf32>, tensor<f32>) -> tensor<256xf32>
      %bs = "stablehlo.broadcast_in_dim"(%sum) <{broadcast_dimensions = array<i64: 0>}> : (tensor<256xf32>) -> tensor<256x16xf32>
      %h2 = "stablehlo.divide"(%h, %bs) : (tensor<256x16xf32>, tensor<256x16xf32>) -> tensor<256x16xf32>
      %one = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %i2 = "stablehlo.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%i2, %h2, %m, %fl) : (tensor<i32>, tensor<256x16xf32>, tensor<256x256xi1>, tensor<256x256xf32>) -> ()
    }) : (tensor<i32>, tensor<256x16xf32>, tensor<256x256xi1>, tensor<256x256xf32>) -> (tensor<i32>, tensor<256x16xf32>, tensor<256x256xi1>, tensor<256x256xf32>)
    "func.return"(%w#1) : (tensor<256x16xf32>) -> ()
  }) : () -> ()

// A padding mask from a vector of lengths: the loop carries the lengths
// (1 KiB) instead of the [256, 256] mask (64 KiB), and each chunk of rows
// compares the key positions with its rows' lengths.
// CHECK-LABEL: func.func public @mask_from_lengths
// CHECK:       "stablehlo.while"(%{{.*}}, %arg0, %arg1) ({
// CHECK:       ^bb0(%{{.*}}: tensor<i32>, %{{.*}}: tensor<256x16xf32>, %[[LEN:.*]]: tensor<256xi32>):
// CHECK:         "stablehlo.while"(%{{.*}}, %{{.*}}, %[[LEN]], %{{.*}})
// CHECK:         ^bb0(%{{.*}}: tensor<i64>, %{{.*}}: tensor<256x16xf32>, %[[LENB:.*]]: tensor<256xi32>, %{{.*}}: tensor<256x16xf32>):
// CHECK:         %[[KEY:.*]] = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<64x256xi32>
// CHECK:         %[[LC:.*]] = "stablehlo.dynamic_slice"(%[[LENB]], %{{.*}}) <{slice_sizes = array<i64: 64>}>
// CHECK:         %[[L:.*]] = "stablehlo.broadcast_in_dim"(%[[LC]]) <{broadcast_dimensions = array<i64: 0>}> : (tensor<64xi32>) -> tensor<64x256xi32>
// CHECK:         "stablehlo.compare"(%[[KEY]], %[[L]]) {{.*}}comparison_direction LT
// CHECK:       "stablehlo.return"(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<i32>, tensor<256x16xf32>, tensor<256xi32>) -> ()
  "func.func"() <{function_type = (tensor<256x16xf32>, tensor<256xi32>) -> tensor<256x16xf32>, sym_name = "mask_from_lengths", sym_visibility = "public"}> ({
  ^bb0(%x: tensor<256x16xf32>, %len: tensor<256xi32>):
    %c = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<256x256xi32>
    %l = "stablehlo.broadcast_in_dim"(%len) <{broadcast_dimensions = array<i64: 0>}> : (tensor<256xi32>) -> tensor<256x256xi32>
    %mask = "stablehlo.compare"(%c, %l) <{comparison_direction = #stablehlo<comparison_direction LT>, compare_type = #stablehlo<comparison_type SIGNED>}> : (tensor<256x256xi32>, tensor<256x256xi32>) -> tensor<256x256xi1>
    %i0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %w:3 = "stablehlo.while"(%i0, %x, %mask) ({
    ^bb0(%i: tensor<i32>, %h: tensor<256x16xf32>, %m: tensor<256x256xi1>):
      %n = "stablehlo.constant"() <{value = dense<4> : tensor<i32>}> : () -> tensor<i32>
      %lt = "stablehlo.compare"(%i, %n) <{comparison_direction = #stablehlo<comparison_direction LT>, compare_type = #stablehlo<comparison_type SIGNED>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%lt) : (tensor<i1>) -> ()
    }, {
    ^bb0(%i: tensor<i32>, %h: tensor<256x16xf32>, %m: tensor<256x256xi1>):
      %s = "stablehlo.dot_general"(%h, %h) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>}> : (tensor<256x16xf32>, tensor<256x16xf32>) -> tensor<256x256xf32>
      %z0 = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
      %zs = "stablehlo.broadcast_in_dim"(%z0) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<256x256xf32>
      %e = "stablehlo.exponential"(%s) : (tensor<256x256xf32>) -> tensor<256x256xf32>
      %sm = "stablehlo.select"(%m, %e, %zs) : (tensor<256x256xi1>, tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
      %z = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
      %sum = "stablehlo.reduce"(%sm, %z) <{dimensions = array<i64: 1>}> ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %t = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%t) : (tensor<f32>) -> ()
      }) : (tensor<256x256xf32>, tensor<f32>) -> tensor<256xf32>
      %bs = "stablehlo.broadcast_in_dim"(%sum) <{broadcast_dimensions = array<i64: 0>}> : (tensor<256xf32>) -> tensor<256x16xf32>
      %h2 = "stablehlo.divide"(%h, %bs) : (tensor<256x16xf32>, tensor<256x16xf32>) -> tensor<256x16xf32>
      %one = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %i2 = "stablehlo.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%i2, %h2, %m) : (tensor<i32>, tensor<256x16xf32>, tensor<256x256xi1>) -> ()
    }) : (tensor<i32>, tensor<256x16xf32>, tensor<256x256xi1>) -> (tensor<i32>, tensor<256x16xf32>, tensor<256x256xi1>)
    "func.return"(%w#1) : (tensor<256x16xf32>) -> ()
  }) : () -> ()
}) : () -> ()
