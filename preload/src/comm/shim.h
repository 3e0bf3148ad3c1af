/* The MPI header of the implementation libredio.so is built for, and the
 * handle constants that mpi.h defines as macros (bindgen cannot evaluate
 * them). Defined in shim.c. The handles are variables: under Open MPI they
 * may only be known once libmpi is loaded (redio_shim_bind). */
#include <mpi.h>

void redio_shim_bind(void *(*lookup)(const char *name));

extern MPI_Comm redio_mpi_comm_world;
extern MPI_Comm redio_mpi_comm_null;
extern MPI_Comm redio_mpi_comm_self;
extern MPI_Datatype redio_mpi_byte;
extern MPI_Datatype redio_mpi_int;
extern MPI_Datatype redio_mpi_uint64;
extern MPI_Op redio_mpi_min;
extern MPI_Op redio_mpi_sum;
extern MPI_Op redio_mpi_bxor;
extern MPI_Group redio_mpi_group_null;
extern MPI_Request redio_mpi_request_null;
extern MPI_Errhandler redio_mpi_errors_return;
extern MPI_Status *const redio_mpi_status_ignore;
extern void *const redio_mpi_in_place;
extern const int redio_mpi_success;
extern const int redio_mpi_undefined;
extern const int redio_mpi_max_library_version_string;
/* ULFM's MPIX_ERR_PROC_FAILED and MPIX_ERR_REVOKED error classes, or -1
 * when the implementation has no usable ULFM. */
extern const int redio_mpix_err_proc_failed;
extern const int redio_mpix_err_revoked;
/* The MPIX_FT attribute key (true when fault tolerance is enabled), or -1. */
extern const int redio_mpix_ft;
/* "MPICH", "Open MPI" (4.x) or "Open MPI 5". */
extern const char redio_mpi_flavour[];
/* The error handler function that libredio.so gives the application's
 * replica world under ULFM (MPI_Comm_create_errhandler): it passes the
 * error code to Rust (redio_on_replica_world_error, runtime/ulfm.rs),
 * which retires the replica on a process failure and ends the job on any
 * other error. */
extern MPI_Comm_errhandler_function *const redio_errhandler_replica_world;
