/* C++ streams, on SHARED_DIR and then on LOCAL_DIR: std::ofstream,
 * std::ifstream, std::fstream.
 *
 * Usage: io_fstream SHARED_DIR LOCAL_DIR
 *
 * libstdc++'s basic_filebuf does not use stdio for data: __basic_file<char>
 * opens with fopen64 (fdopen for an fd), takes fileno(), and then calls
 * read, write, writev and lseek64 on that fd directly; close is fclose
 * (tests/interposition/coverage.rs checks these bindings with LD_DEBUG=bindings). So a
 * managed FILE must answer fileno() with a managed fd. */
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

static int rank;

static void say(const std::string &text) {
    std::string line = text + "\n";
    fwrite(line.data(), 1, line.size(), stdout);
    fflush(stdout);
}

static uint32_t crc(const char *data, size_t n) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ static_cast<unsigned char>(data[i])) * 16777619u;
    return h;
}

static std::string hex(uint32_t value) {
    char text[16];
    snprintf(text, sizeof text, "%08x", value);
    return text;
}

static void run(const std::string &tag, const std::string &dir) {
    std::string path = dir + "/fstream." + std::to_string(rank) + ".txt";
    std::vector<char> block(20000);
    for (size_t i = 0; i < block.size(); i++) block[i] = static_cast<char>((i * 7 + rank * 31 + (i >> 9)) & 0xff);

    {
        std::ofstream out(path, std::ios::out | std::ios::trunc | std::ios::binary);
        say(tag + " ofstream open: " + (out.is_open() ? "ok" : "failed"));
        out << "rank " << rank << "\n";
        for (int i = 0; i < 100; i++) out << "line " << i << " value " << i * 0.5 + rank << "\n";
        out.write(block.data(), static_cast<std::streamsize>(block.size())); /* larger than the buffer */
        out << "\nafter block\n";
        say(tag + " tellp: " + std::to_string(static_cast<long long>(out.tellp())));
        out.flush();
        say(tag + " ofstream good after flush: " + std::to_string(out.good()));
        out.close();
        say(tag + " ofstream good after close: " + std::to_string(out.good()));
    }
    {
        std::ofstream app(path, std::ios::app);
        app << "appended line of rank " << rank << "\n";
        say(tag + " append good: " + std::to_string(app.good()));
    }
    {
        std::ifstream in(path, std::ios::binary);
        say(tag + " ifstream open: " + (in.is_open() ? "ok" : "failed"));
        std::string first;
        std::getline(in, first);
        say(tag + " getline: " + first);
        std::string word;
        int number = -1;
        double value = -1;
        in >> word >> number >> word >> value;
        std::ostringstream parsed;
        parsed << tag << " parsed: " << number << " " << value;
        say(parsed.str());
        in.seekg(100);
        say(tag + " tellg after seekg 100: " + std::to_string(static_cast<long long>(in.tellg())));
        std::vector<char> part(5000);
        in.read(part.data(), static_cast<std::streamsize>(part.size()));
        say(tag + " read 5000: " + std::to_string(in.gcount()) + " crc " + hex(crc(part.data(), in.gcount())));
        in.seekg(0, std::ios::end);
        long long size = in.tellg();
        say(tag + " size by seekg end: " + std::to_string(size));
        in.seekg(0);
        std::vector<char> all(static_cast<size_t>(size > 0 ? size : 0) + 10);
        in.read(all.data(), static_cast<std::streamsize>(all.size()));
        say(tag + " read all: " + std::to_string(in.gcount()) + " crc " + hex(crc(all.data(), in.gcount())) +
            " eof " + std::to_string(in.eof()));
    }
    {
        std::ifstream missing(dir + "/missing." + std::to_string(rank) + ".txt");
        say(tag + " ifstream missing: " + (missing.is_open() ? "open" : "not open"));
    }
    {
        std::string path2 = dir + "/fstream-rw." + std::to_string(rank) + ".dat";
        std::fstream io(path2, std::ios::in | std::ios::out | std::ios::trunc | std::ios::binary);
        io.write(block.data(), 3000);
        io.seekp(1000);
        io.write("OVERWRITTEN", 11);
        io.seekg(990);
        char back[40] = {0};
        io.read(back, 30);
        say(tag + " fstream read back: " + std::to_string(io.gcount()) + " crc " + hex(crc(back, 30)));
        io.seekg(0, std::ios::end);
        say(tag + " fstream size: " + std::to_string(static_cast<long long>(io.tellg())));
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 3) {
        fprintf(stderr, "usage: %s SHARED_DIR LOCAL_DIR\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    say("io_fstream rank " + std::to_string(rank));
    run("shared", argv[1]);
    run("local", argv[2]);
    say("io_fstream rank " + std::to_string(rank) + " done");
    MPI_Finalize();
    return 0;
}
