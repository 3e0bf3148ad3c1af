/* Handle constants of the MPI implementation libredio.so is built for.
 *
 * Open MPI's handles are addresses of objects inside libmpi. They are made
 * weak here so that libredio.so still loads into a process that has no
 * libmpi (a shell, a tool started by the job): the references are then 0
 * and never used. A process that loads libmpi later, with
 * dlopen(RTLD_LOCAL) (Python and mpi4py), also sees 0 here:
 * redio_shim_bind() then looks the objects up in the loaded libmpi, at
 * MPI_Init. So the handles are variables, written once before the first
 * PMPI call and only read afterwards. */
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

MPI_Comm redio_mpi_comm_world = MPI_COMM_WORLD;
MPI_Comm redio_mpi_comm_null = MPI_COMM_NULL;
MPI_Comm redio_mpi_comm_self = MPI_COMM_SELF;
MPI_Datatype redio_mpi_byte = MPI_BYTE;
MPI_Datatype redio_mpi_int = MPI_INT;
MPI_Datatype redio_mpi_uint64 = MPI_UINT64_T;
MPI_Op redio_mpi_min = MPI_MIN;
MPI_Op redio_mpi_sum = MPI_SUM;
MPI_Op redio_mpi_bxor = MPI_BXOR;
MPI_Group redio_mpi_group_null = MPI_GROUP_NULL;
MPI_Request redio_mpi_request_null = MPI_REQUEST_NULL;
MPI_Errhandler redio_mpi_errors_return = MPI_ERRORS_RETURN;
MPI_Status *const redio_mpi_status_ignore = MPI_STATUS_IGNORE;
void *const redio_mpi_in_place = MPI_IN_PLACE;
/* Binds the handles above that are still 0 (Open MPI's weak references,
 * when libmpi was not loaded with the program) to the objects of the loaded
 * libmpi, found by `lookup` (NULL when missing). MPICH's handles are
 * integer constants: nothing to do. */
void redio_shim_bind(void *(*lookup)(const char *name))
{
#ifdef OPEN_MPI
#define REDIO_BIND(var, type, symbol)                                          \
    if (var == (type)0)                                                        \
        var = (type)lookup(#symbol);
    REDIO_BIND(redio_mpi_comm_world, MPI_Comm, ompi_mpi_comm_world)
    REDIO_BIND(redio_mpi_comm_null, MPI_Comm, ompi_mpi_comm_null)
    REDIO_BIND(redio_mpi_comm_self, MPI_Comm, ompi_mpi_comm_self)
    REDIO_BIND(redio_mpi_byte, MPI_Datatype, ompi_mpi_byte)
    REDIO_BIND(redio_mpi_int, MPI_Datatype, ompi_mpi_int)
    REDIO_BIND(redio_mpi_uint64, MPI_Datatype, ompi_mpi_uint64_t)
    REDIO_BIND(redio_mpi_min, MPI_Op, ompi_mpi_op_min)
    REDIO_BIND(redio_mpi_sum, MPI_Op, ompi_mpi_op_sum)
    REDIO_BIND(redio_mpi_bxor, MPI_Op, ompi_mpi_op_bxor)
    REDIO_BIND(redio_mpi_group_null, MPI_Group, ompi_mpi_group_null)
    REDIO_BIND(redio_mpi_request_null, MPI_Request, ompi_request_null)
    REDIO_BIND(redio_mpi_errors_return, MPI_Errhandler, ompi_mpi_errors_return)
#undef REDIO_BIND
#else
    (void)lookup;
#endif
}

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
