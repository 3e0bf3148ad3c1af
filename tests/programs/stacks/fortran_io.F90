! A Fortran MPI program with real I/O (tests/io_stacks/fortran.rs): under
! redio each replica of an N-rank job must see N ranks, and its files must
! be the plain run's, written once.
!
! Usage: fortran_io SHARED_DIR LOCAL_DIR
!
! Built with `use mpi`, or with `use mpi_f08` when REDIO_F08 is defined
! (the two reach MPI through different bindings).
!
! Every rank prints its rank, the world size and an MPI_Allreduce; writes
! SHARED_DIR/fortran.<rank>.txt with Fortran's own I/O; writes its block
! of SHARED_DIR/fortran.mpiio.dat with a collective MPI-IO write; then
! reads the next rank's block back and prints what it found.
program fortran_io
#ifdef REDIO_F08
  use mpi_f08
#else
  use mpi
#endif
  implicit none
  integer, parameter :: n = 16384
  integer :: ierr, rank, nprocs, mine, total, i, unit, other, count
  integer :: block(n), back(n)
#ifdef REDIO_F08
  type(MPI_File) :: fh
  type(MPI_Status) :: status
#else
  integer :: fh
  integer :: status(MPI_STATUS_SIZE)
#endif
  integer(kind=MPI_OFFSET_KIND) :: offset
  character(len=4096) :: shared
  character(len=16) :: tag

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  mine = rank + 1
  call MPI_Allreduce(mine, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  print '(A,I0,A,I0,A,I0)', 'rank ', rank, ' of ', nprocs, ' sum ', total

  call get_command_argument(1, shared)
  write (tag, '(I0)') rank
  open (newunit=unit, file=trim(shared)//'/fortran.'//trim(tag)//'.txt', &
        status='replace', action='write')
  do i = 1, 200
    write (unit, '(A,I0,A,I0)') 'rank ', rank, ' line ', i
  end do
  close (unit)

  do i = 1, n
    block(i) = rank*n + i
  end do
  call MPI_File_open(MPI_COMM_WORLD, trim(shared)//'/fortran.mpiio.dat', &
                     ior(MPI_MODE_CREATE, MPI_MODE_WRONLY), MPI_INFO_NULL, fh, ierr)
  offset = int(rank, MPI_OFFSET_KIND)*n*4
  call MPI_File_write_at_all(fh, offset, block, n, MPI_INTEGER, status, ierr)
  call MPI_Get_count(status, MPI_INTEGER, count, ierr)
  call MPI_File_close(fh, ierr)
  print '(A,I0,A,I0)', 'rank ', rank, ' wrote ', count

  other = mod(rank + 1, nprocs)
  call MPI_File_open(MPI_COMM_WORLD, trim(shared)//'/fortran.mpiio.dat', &
                     MPI_MODE_RDONLY, MPI_INFO_NULL, fh, ierr)
  offset = int(other, MPI_OFFSET_KIND)*n*4
  call MPI_File_read_at_all(fh, offset, back, n, MPI_INTEGER, status, ierr)
  call MPI_Get_count(status, MPI_INTEGER, count, ierr)
  call MPI_File_close(fh, ierr)
  print '(A,I0,A,I0,A,I0,A,I0)', 'rank ', rank, ' read ', count, &
    ' of rank ', other, ' first ', back(1)
  print '(A,I0,A,I0)', 'rank ', rank, ' sum ', sum(int(back, 8))

  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Finalize(ierr)
end program fortran_io
