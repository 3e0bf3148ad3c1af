! Prints this process's rank and the size of MPI_COMM_WORLD, from Fortran:
! under redio the replicas of an N-rank job must each see N
! (tests/launch_modes.rs).
program fortran_size
  use mpi
  implicit none
  integer :: ierr, rank, nprocs
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  print '(A,I0,A,I0)', 'rank ', rank, ' of ', nprocs
  call MPI_Finalize(ierr)
end program fortran_size
