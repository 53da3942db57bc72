//! GPU kernels (to come).
