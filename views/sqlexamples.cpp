#include "views/sqlexamples.h"

namespace fusescope {
namespace {

// details_json is '' before the fuse stage; json_each must not see that.
#define FUSESCOPE_DETAILS "CASE WHEN json_valid(c.details_json) THEN c.details_json ELSE '{}' END"

const SqlExample kExamples[] = {
    {"Kernels by total time",
     "-- events: the loaded runs' events (the shown run and, for --compare files, its eager run)\n"
     "SELECT run, name, count(*) AS calls, round(sum(dur_ns) / 1e6, 3) AS total_ms,\n"
     "       round(avg(dur_ns) / 1e3, 2) AS avg_us\n"
     "FROM events WHERE kind = 'kernel' GROUP BY run, name ORDER BY total_ms DESC LIMIT 50"},
    {"Ops by total time",
     "SELECT run, name, count(*) AS calls, round(sum(dur_ns) / 1e6, 3) AS total_ms\n"
     "FROM events WHERE kind = 'op' GROUP BY run, name ORDER BY total_ms DESC LIMIT 50"},
    {"Longest events",
     "SELECT run, id, kind, name, start_ns, dur_ns, track, depth FROM events ORDER BY dur_ns DESC LIMIT 20"},
    {"Runs",
     "SELECT id, name, model, mode, round(duration_ns / 1e6, 3) AS ms, events, steps, dropped_events, complete\n"
     "FROM runs ORDER BY id"},
    {"Busiest tracks (level-of-detail totals)",
     "-- The finest stored level of a track sums to all of its events and busy time;\n"
     "-- tracks with too few events for a summary have no lod rows.\n"
     "WITH finest AS (SELECT run, track, min(level) AS level FROM lod GROUP BY run, track)\n"
     "SELECT l.run, s.value AS track, sum(l.count) AS events, round(sum(l.busy_ns) / 1e6, 3) AS busy_ms,\n"
     "       max(l.max_depth) AS max_depth\n"
     "FROM lod l JOIN finest f ON f.run = l.run AND f.track = l.track AND f.level = l.level\n"
     "JOIN tracks t ON t.run = l.run AND t.id = l.track JOIN strings s ON s.id = t.name\n"
     "GROUP BY l.run, l.track ORDER BY busy_ms DESC"},
    {"Events and bytes per track",
     "SELECT c.run, s.value AS track, sum(c.count) AS events, sum(length(c.data)) AS bytes,\n"
     "       round(1.0 * sum(length(c.data)) / sum(c.count), 1) AS bytes_per_event\n"
     "FROM event_chunks c JOIN tracks t ON t.run = c.run AND t.id = c.track JOIN strings s ON s.id = t.name\n"
     "GROUP BY c.run, c.track ORDER BY events DESC"},
    {"Tracks with names and kinds",
     "SELECT t.run, t.id, s.value AS name, k.name AS kind, t.pid, t.tid, t.device\n"
     "FROM tracks t JOIN strings s ON s.id = t.name\n"
     "JOIN enum_names k ON k.enum = 'track_kind' AND k.value = t.kind\n"
     "ORDER BY t.run, t.sort_index"},
    {"Largest allocations",
     "SELECT r.name AS run, a.time_ns, printf('0x%x', a.address) AS address, a.bytes, a.device, a.op\n"
     "FROM allocations a JOIN runs r ON r.id = a.run WHERE a.bytes > 0 ORDER BY a.bytes DESC LIMIT 20"},
    {"Peak memory per run and device",
     "SELECT r.name AS run, a.device, count(*) AS events, max(a.allocated_after) AS peak_allocated,\n"
     "       max(a.reserved_after) AS peak_reserved\n"
     "FROM allocations a JOIN runs r ON r.id = a.run GROUP BY a.run, a.device"},
    {"Flows by kind",
     "SELECT f.run, k.name AS kind, count(*) AS flows,\n"
     "       sum(f.from_event IS NULL OR f.to_event IS NULL) AS open_ended\n"
     "FROM flows f JOIN enum_names k ON k.enum = 'flow_kind' AND k.value = f.kind\n"
     "GROUP BY f.run, f.kind"},
    {"Counter tracks",
     "SELECT c.run, s.value AS counter, count(*) AS samples, min(c.value) AS min, max(c.value) AS max,\n"
     "       avg(c.value) AS mean\n"
     "FROM counters c JOIN tracks t ON t.run = c.run AND t.id = c.track JOIN strings s ON s.id = t.name\n"
     "GROUP BY c.run, c.track"},
    {"Compile stages",
     "SELECT r.name AS run, c.position, c.name, c.segment, round(c.duration_ms, 3) AS ms, c.nodes, c.kernels,\n"
     "       c.bytes_moved, c.planned_peak, c.unplanned_peak\n"
     "FROM compile_stages c JOIN runs r ON r.id = c.run ORDER BY c.run, c.position"},
    {"Fused kernels by estimated bytes moved",
     "SELECT c.run, json_extract(k.value, '$.name') AS kernel, json_extract(k.value, '$.kind') AS kind,\n"
     "       json_array_length(k.value, '$.nodes') AS nodes,\n"
     "       json_extract(k.value, '$.bytes_read') + json_extract(k.value, '$.bytes_written') AS bytes\n"
     "FROM compile_stages c, json_each(" FUSESCOPE_DETAILS ", '$.kernels') k\n"
     "WHERE c.name = 'fuse' ORDER BY bytes DESC"},
    {"Fusion decisions",
     "SELECT c.run, json_extract(d.value, '$.producer') AS producer, json_extract(d.value, '$.consumer') AS consumer,\n"
     "       json_extract(d.value, '$.fused') AS fused, json_extract(d.value, '$.bytes_saved') AS bytes_saved,\n"
     "       json_extract(d.value, '$.reason') AS reason\n"
     "FROM compile_stages c, json_each(" FUSESCOPE_DETAILS ", '$.decisions') d\n"
     "WHERE c.name = 'fuse' ORDER BY bytes_saved DESC"},
    {"Compile log",
     "SELECT r.name AS run, s.name AS stage, l.line, l.text\n"
     "FROM compile_log l JOIN compile_stages s ON s.run = l.run AND s.position = l.position\n"
     "JOIN runs r ON r.id = l.run ORDER BY l.run, l.position, l.line"},
    {"Run values",
     "SELECT r.name AS run, v.key, v.value FROM run_values v JOIN runs r ON r.id = v.run ORDER BY v.run, v.key"},
    {"Longest interned names",
     "SELECT id, length(value) AS chars, value FROM strings ORDER BY chars DESC LIMIT 50"},
    {"Trace metadata", "SELECT key, value FROM meta"},
};

#undef FUSESCOPE_DETAILS

} // namespace

const std::vector<SqlExample> &sqlExamples()
{
    static const std::vector<SqlExample> examples(std::begin(kExamples), std::end(kExamples));
    return examples;
}

} // namespace fusescope
