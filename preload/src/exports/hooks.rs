//! The hooked C library functions libredio.so exports.
//!
//! Each exported `name` is one line: `handler(real::name, args…)`. The
//! handler (in [`crate::io`]) decides whether the call passes through (to
//! the real function it was given) or is coordinated. Passing the real
//! function lets one handler serve `open` and `open64`, `fstat` and
//! `fstat64`, … The list of functions is [`crate::sys::real`]'s.

use crate::io::{aio, dirs, fsinfo, locks, names, posix, stdio, unsupported};
use crate::sys::real::{self, *};

/// Defines the exported hook of every hooked function.
macro_rules! exported_hooks {
    ($(
        $(#[$meta:meta])*
        fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty => $handler:path;
    )*) => {
        $(
            $(#[$meta])*
            ///
            /// # Safety
            /// Called from C with the arguments the C library specifies.
            // In a unit-test binary the hooks must not replace the C library's.
            #[cfg_attr(not(test), no_mangle)]
            #[allow(clippy::too_many_arguments)]
            pub unsafe extern "C" fn $name($($arg: $ty),*) -> $ret {
                $handler(real::$name, $($arg),*)
            }
        )*
    };
}

real::hooked_functions!(exported_hooks);
