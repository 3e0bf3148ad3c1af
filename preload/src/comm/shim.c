/* Handle constants of the MPI implementation libredio.so is built for.
 *
 * Open MPI's handles are addresses of objects inside libmpi. They are made
 * weak here so that libredio.so still loads into a process that has no
 * libmpi (a shell, a tool started by the job): the references are then 0
 * and never used. */
#include "shim.h"

#ifdef OPEN_MPI
#pragma weak ompi_mpi_comm_world
#pragma weak ompi_mpi_comm_null
#pragma weak ompi_mpi_comm_self
#pragma weak ompi_mpi_byte
#pragma weak ompi_mpi_int
#pragma weak ompi_mpi_uint64_t
#pragma weak ompi_mpi_op_min
#pragma weak ompi_mpi_op_sum
#pragma weak ompi_mpi_op_bxor
#pragma weak ompi_mpi_group_null
#pragma weak ompi_request_null
#pragma weak ompi_mpi_errors_return
#if OMPI_MAJOR_VERSION >= 5
const char redio_mpi_flavour[] = "Open MPI 5";
#else
const char redio_mpi_flavour[] = "Open MPI";
#endif
#else
const char redio_mpi_flavour[] = "MPICH";
#endif

const MPI_Comm redio_mpi_comm_world = MPI_COMM_WORLD;
const MPI_Comm redio_mpi_comm_null = MPI_COMM_NULL;
const MPI_Comm redio_mpi_comm_self = MPI_COMM_SELF;
const MPI_Datatype redio_mpi_byte = MPI_BYTE;
const MPI_Datatype redio_mpi_int = MPI_INT;
const MPI_Datatype redio_mpi_uint64 = MPI_UINT64_T;
const MPI_Op redio_mpi_min = MPI_MIN;
const MPI_Op redio_mpi_sum = MPI_SUM;
const MPI_Op redio_mpi_bxor = MPI_BXOR;
const MPI_Group redio_mpi_group_null = MPI_GROUP_NULL;
const MPI_Request redio_mpi_request_null = MPI_REQUEST_NULL;
const MPI_Errhandler redio_mpi_errors_return = MPI_ERRORS_RETURN;
MPI_Status *const redio_mpi_status_ignore = MPI_STATUS_IGNORE;
void *const redio_mpi_in_place = MPI_IN_PLACE;
const int redio_mpi_success = MPI_SUCCESS;
const int redio_mpi_undefined = MPI_UNDEFINED;
const int redio_mpi_max_library_version_string = MPI_MAX_LIBRARY_VERSION_STRING;

/* ULFM error classes (Open MPI 5's mpi-ext.h). MPICH's mpi.h defines
 * MPIX_ERR_PROC_FAILED too, but its fault-tolerance functions do not work:
 * only Open MPI 5 exports the real values, the others get the sentinel -1,
 * which no error class equals. */
#if defined(OPEN_MPI) && OMPI_MAJOR_VERSION >= 5
#include <mpi-ext.h>
#endif
#if defined(OPEN_MPI) && defined(MPIX_ERR_PROC_FAILED) && defined(MPIX_ERR_REVOKED)
const int redio_mpix_err_proc_failed = MPIX_ERR_PROC_FAILED;
const int redio_mpix_err_revoked = MPIX_ERR_REVOKED;
const int redio_mpix_ft = MPIX_FT;
#else
const int redio_mpix_err_proc_failed = -1;
const int redio_mpix_err_revoked = -1;
const int redio_mpix_ft = -1;
#endif

/* Defined in Rust (runtime/ulfm.rs). An MPI error handler is variadic,
 * which Rust cannot define: this C function adapts it. */
void redio_on_replica_world_error(int code);

static void replica_world_errhandler(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    redio_on_replica_world_error(*code);
}

MPI_Comm_errhandler_function *const redio_errhandler_replica_world =
    replica_world_errhandler;
