<?php
/*
 * guildboard is a third web app for stacktune's end-to-end tests: the
 * board of a game backend (players, guilds, memberships, posts, items) in
 * plain PHP 8.2 (no framework, no Composer) with mysqli, served by php-fpm
 * behind nginx. It is neither the reference app nor the bookshop (both Go):
 * a loop or profiler that works only on those fails here.
 *
 * Its faults, each on a page of its own:
 *   - GET /guilds/{id}/board lists the guild's latest 1000 posts, then asks
 *     each post's author with "SELECT name, level FROM players WHERE id = ?":
 *     an N+1 of 1000 queries per request (statement board_author). With
 *     "board_authors_in_one_query": true in config.json (fix.sh on) it asks
 *     them all in one "... WHERE id IN (...)" (board_authors): the user's
 *     code fix;
 *   - GET /players/{id}/inventory reads the player's items with
 *     "WHERE player_id = ? ORDER BY power DESC, id LIMIT 50" and items
 *     (250,000 rows) has no index on player_id: a full scan per request
 *     (statement inventory; EXPLAIN type ALL). Not an N+1: one query per
 *     request. ALTER TABLE items ADD INDEX (player_id) fixes it (type ref);
 *   - "SELECT name FROM players WHERE id = ?" (statement player_name) runs
 *     150 times per request on GET /guilds/{id}/members (one per member),
 *     20 times on GET /guilds/{id}/stats (one per top poster) and once on
 *     GET /players/{id}/inventory (the owner): one statement, three pages,
 *     three counts;
 *   - GET /ranking burns CPU in rank_players(): 200 players from one
 *     primary-key range query, each hashed RANK_ROUNDS times (sha256) and
 *     sorted; several ms of CPU, little SQL;
 *   - GET /guilds/{id}/stats waits on SQL: an aggregate of the season's
 *     40,000 posts joined with their authors (statement guild_activity:
 *     posts and their authors' average level by guild, a primary-key range
 *     and one eq_ref per post; no index makes it cheap), tens of ms on the
 *     server, little PHP.
 * GET / lists guilds; POST /login (form name=player-00042) sets a signed
 * cookie and answers 303; POST /posts (form body, logged in) adds a post to
 * the player's guild and answers 201.
 *
 * POST /initialize creates the schema if needed (indexes added meanwhile
 * stay) and loads deterministic data with multi-row INSERTs (100 guilds,
 * 20,000 players, 20,000 memberships, 120,000 posts, 250,000 items); when
 * the loaded data is already this version (table meta), it only deletes
 * the posts a run added, so a bench's pre-run call is fast. ?full=1 forces
 * the load.
 *
 * Files next to this one: settings.json (written by whoever deploys the
 * app: "db" {host, port, socket, user, password, database} and
 * "request_log", a path or ""), read per request; config.json (the code
 * switches), read per request and flipped by fix.sh on|off.
 *
 * Every statement is sent as text (mysqli_query, values inlined: integers
 * cast, strings escaped), as many PHP apps do. The app measures each
 * request itself and says so in response headers:
 *   X-App-Queries: board_author=1000,board_posts=1,guild=1 (per statement id)
 *   X-App-DB-Ms:   wall time inside DB calls (connect, each query and its
 *                  fetch, close)
 *   X-App-CPU-Ms:  getrusage user+sys of the request
 *   X-App-Wall-Ms: the request's wall time in PHP
 * and, when settings.json names a request_log, one JSON line per request
 * appended to it: {"start", "end" (unix seconds), "pid", "method", "route"
 * (e.g. "GET /guilds/{id}/board"), "path", "status", "wall_ms", "cpu_ms",
 * "db_ms", "queries": {id: {"sql", "calls", "ms"}}}; "sql" is the
 * statement's text with ? for each value (the IN list is one ?).
 */
declare(strict_types=1);

const DATA_VERSION = 'guildboard-1'; // change it with the data below
const N_GUILDS = 100;
const N_PLAYERS = 20000;      // player p is in guild (p-1) % N_GUILDS + 1
const N_POSTS = 120000;       // post i is in guild (i-1) % N_GUILDS + 1
const N_ITEMS = 250000;       // item i belongs to player (i*7919) % N_PLAYERS + 1
const BATCH_ROWS = 2000;      // rows per INSERT of /initialize
const BOARD_POSTS = 1000;     // posts on a board page
const MEMBERS_SHOWN = 150;    // members on a members page
const TOP_POSTERS = 20;       // posters on a stats page
const SEASON_POSTS = 40000;   // the stats page's activity: the season's posts (the last loaded)
const INVENTORY_ITEMS = 50;   // items on an inventory page, at most
const RANKED_PLAYERS = 200;   // players GET /ranking ranks (ids 1..200)
const RANK_ROUNDS = 100;      // sha256 rounds per ranked player
const BASE_TIME = 1704067200; // 2024-01-01 00:00:00 UTC
const SECRET = 'guildboard-cookie-key';

// The application's statements by id: ? is a value, inlined by bind().
const STATEMENTS = [
    'guilds'         => 'SELECT id, name, tag FROM guilds ORDER BY id LIMIT 20',
    'guild'          => 'SELECT name, tag FROM guilds WHERE id = ?',
    'board_posts'    => 'SELECT id, player_id, body, created_at FROM posts WHERE guild_id = ? ORDER BY id DESC LIMIT ' . BOARD_POSTS,
    'board_author'   => 'SELECT name, level FROM players WHERE id = ?',
    'board_authors'  => 'SELECT id, name, level FROM players WHERE id IN (?)',
    'player_name'    => 'SELECT name FROM players WHERE id = ?',
    'members'        => 'SELECT player_id, role FROM memberships WHERE guild_id = ? ORDER BY joined_at, player_id LIMIT ' . MEMBERS_SHOWN,
    'top_posters'    => 'SELECT player_id, COUNT(*) AS n FROM posts WHERE guild_id = ? GROUP BY player_id ORDER BY n DESC, player_id LIMIT ' . TOP_POSTERS,
    'guild_activity' => 'SELECT p.guild_id, COUNT(*) AS posts, ROUND(AVG(pl.level), 1) AS avg_level, MAX(p.id) AS last_post FROM posts p JOIN players pl ON pl.id = p.player_id WHERE p.id > ? GROUP BY p.guild_id ORDER BY posts DESC, p.guild_id',
    'inventory'      => 'SELECT id, kind, rarity, power FROM items WHERE player_id = ? ORDER BY power DESC, id LIMIT ' . INVENTORY_ITEMS,
    'bracket'        => 'SELECT id, name, score FROM players WHERE id BETWEEN ? AND ?',
    'login'          => 'SELECT id, guild_id FROM players WHERE name = ?',
    'new_post'       => 'INSERT INTO posts (guild_id, player_id, body, created_at) VALUES (?, ?, ?, ?)',
];

// The schema: CREATE TABLE IF NOT EXISTS, so indexes added by hand stay.
// items has no index on player_id: the fault of the inventory page.
const SCHEMA = [
    'CREATE TABLE IF NOT EXISTS meta (k VARCHAR(32) PRIMARY KEY, v VARCHAR(64) NOT NULL)',
    'CREATE TABLE IF NOT EXISTS guilds (id INT PRIMARY KEY, name VARCHAR(32) NOT NULL, tag CHAR(3) NOT NULL)',
    'CREATE TABLE IF NOT EXISTS players (id INT PRIMARY KEY, name VARCHAR(32) NOT NULL, level INT NOT NULL, score INT NOT NULL, guild_id INT NOT NULL, created_at DATETIME NOT NULL, UNIQUE KEY ux_name (name))',
    'CREATE TABLE IF NOT EXISTS memberships (guild_id INT NOT NULL, player_id INT NOT NULL, role VARCHAR(16) NOT NULL, joined_at DATETIME NOT NULL, PRIMARY KEY (guild_id, player_id))',
    'CREATE TABLE IF NOT EXISTS posts (id INT PRIMARY KEY AUTO_INCREMENT, guild_id INT NOT NULL, player_id INT NOT NULL, body VARCHAR(160) NOT NULL, created_at DATETIME NOT NULL, KEY ix_guild (guild_id, id))',
    'CREATE TABLE IF NOT EXISTS items (id INT PRIMARY KEY, player_id INT NOT NULL, kind VARCHAR(16) NOT NULL, rarity TINYINT NOT NULL, power INT NOT NULL)',
];

const WORDS = ['raid', 'loot', 'dragon', 'guild', 'quest', 'boss', 'potion', 'sword', 'shield', 'tonight', 'help', 'trade', 'level', 'dungeon', 'gold', 'party'];
const KINDS = ['sword', 'shield', 'bow', 'staff', 'helm', 'boots', 'ring', 'amulet'];

/** HttpError ends a request with its status and message. */
final class HttpError extends Exception
{
    public function __construct(public readonly int $status, string $message)
    {
        parent::__construct($message);
    }
}

/** App is one request: its connection, settings and measurements. */
final class App
{
    public ?mysqli $db = null;
    /** @var array<string, array{calls: int, ns: int}> */
    public array $stats = [];
    public int $dbNs = 0;
    public string $route = '';
    public int $status = 200;
    /** @var array<string, string> */
    public array $headers = ['Content-Type' => 'text/html; charset=utf-8'];

    public function __construct(public readonly array $settings, public readonly array $config)
    {
    }

    /** conn opens the connection on first use (its time counts as DB time). */
    public function conn(): mysqli
    {
        if ($this->db === null) {
            $d = $this->settings['db'];
            $t = hrtime(true);
            mysqli_report(MYSQLI_REPORT_ERROR | MYSQLI_REPORT_STRICT);
            $this->db = new mysqli($d['host'] ?? null, $d['user'], $d['password'] ?? '', $d['database'], (int)($d['port'] ?? 3306), ($d['socket'] ?? '') ?: null);
            $this->db->set_charset('utf8mb4');
            $this->dbNs += hrtime(true) - $t;
        }
        return $this->db;
    }

    /** bind inlines the values for each ? of statement id (a list for IN). */
    public function bind(string $id, array $args): string
    {
        $parts = explode('?', STATEMENTS[$id]);
        if (count($parts) - 1 !== count($args)) {
            throw new LogicException("statement $id takes " . (count($parts) - 1) . ' values, got ' . count($args));
        }
        $db = $this->conn();
        $sql = $parts[0];
        foreach ($args as $i => $v) {
            $sql .= match (true) {
                is_int($v) => (string)$v,
                is_array($v) => implode(', ', array_map('intval', $v)),
                default => "'" . $db->real_escape_string((string)$v) . "'",
            } . $parts[$i + 1];
        }
        return $sql;
    }

    /** q runs statement id with args and returns its rows, counted and timed. */
    public function q(string $id, array $args = []): array
    {
        $sql = $this->bind($id, $args);
        $t = hrtime(true);
        $res = $this->conn()->query($sql);
        $rows = $res instanceof mysqli_result ? $res->fetch_all(MYSQLI_ASSOC) : [];
        $this->count($id, hrtime(true) - $t);
        return $rows;
    }

    /** exec runs statement id (an INSERT) and returns the insert id. */
    public function exec(string $id, array $args): int
    {
        $sql = $this->bind($id, $args);
        $t = hrtime(true);
        $this->conn()->query($sql);
        $insertID = (int)$this->conn()->insert_id;
        $this->count($id, hrtime(true) - $t);
        return $insertID;
    }

    private function count(string $id, int $ns): void
    {
        $this->stats[$id] ??= ['calls' => 0, 'ns' => 0];
        $this->stats[$id]['calls']++;
        $this->stats[$id]['ns'] += $ns;
        $this->dbNs += $ns;
    }

    /** raw runs SQL that is not one of the app's statements (/initialize), timed. */
    public function raw(string $sql): mysqli_result|bool
    {
        $t = hrtime(true);
        $r = $this->conn()->query($sql);
        $this->dbNs += hrtime(true) - $t;
        return $r;
    }
}

function h(string|int $s): string
{
    return htmlspecialchars((string)$s, ENT_QUOTES | ENT_HTML5, 'UTF-8');
}

function player_name_of(int $id): string
{
    return sprintf('player-%05d', $id);
}

function read_json(string $path): array
{
    $data = @file_get_contents($path);
    if ($data === false) {
        throw new RuntimeException("cannot read $path");
    }
    $v = json_decode($data, true);
    if (!is_array($v)) {
        throw new RuntimeException("$path: not a JSON object: " . json_last_error_msg());
    }
    return $v;
}

function cpu_us(): int
{
    $r = getrusage();
    return $r['ru_utime.tv_sec'] * 1000000 + $r['ru_utime.tv_usec'] + $r['ru_stime.tv_sec'] * 1000000 + $r['ru_stime.tv_usec'];
}

// ---- pages ----

function page_home(App $a): string
{
    $out = '<h1>Guilds</h1><ul id="guilds">';
    foreach ($a->q('guilds') as $g) {
        $out .= '<li><a href="/guilds/' . h($g['id']) . '/board">[' . h($g['tag']) . '] ' . h($g['name']) . '</a></li>';
    }
    return $out . '</ul>';
}

function guild_or_404(App $a, int $id): array
{
    $g = $a->q('guild', [$id]);
    if (!$g) {
        throw new HttpError(404, "no guild $id");
    }
    return $g[0];
}

function page_board(App $a, int $gid): string
{
    $g = guild_or_404($a, $gid);
    $posts = $a->q('board_posts', [$gid]);
    if (count($posts) !== BOARD_POSTS) {
        throw new RuntimeException('board of guild ' . $gid . ': ' . count($posts) . ' posts, want ' . BOARD_POSTS);
    }
    $authors = [];
    if (!empty($a->config['board_authors_in_one_query'])) {
        $ids = array_values(array_unique(array_map(fn($p) => (int)$p['player_id'], $posts)));
        foreach ($a->q('board_authors', [$ids]) as $r) {
            $authors[(int)$r['id']] = $r;
        }
    } else {
        foreach ($posts as $p) {
            // The N+1: one query per post, for its author.
            $r = $a->q('board_author', [(int)$p['player_id']]);
            if ($r) {
                $authors[(int)$p['player_id']] = $r[0];
            }
        }
    }
    $out = '<h1 id="board">Board of ' . h($g['name']) . '</h1><ol id="posts" data-posts="' . count($posts) . '">';
    foreach ($posts as $p) {
        $au = $authors[(int)$p['player_id']] ?? throw new RuntimeException('post ' . $p['id'] . ': no author ' . $p['player_id']);
        $out .= '<li class="post" data-id="' . h($p['id']) . '"><b>' . h($au['name']) . '</b> (lv ' . h($au['level']) . ') ' . h($p['body']) . ' <time>' . h($p['created_at']) . '</time></li>';
    }
    return $out . '</ol>';
}

function page_members(App $a, int $gid): string
{
    $g = guild_or_404($a, $gid);
    $members = $a->q('members', [$gid]);
    $out = '<h1 id="members">Members of ' . h($g['name']) . '</h1><ul data-members="' . count($members) . '">';
    foreach ($members as $m) {
        $n = $a->q('player_name', [(int)$m['player_id']]);
        if (!$n) {
            throw new RuntimeException('member ' . $m['player_id'] . ' of guild ' . $gid . ' is no player');
        }
        $out .= '<li class="member">' . h($n[0]['name']) . ' <i>' . h($m['role']) . '</i></li>';
    }
    if (count($members) !== MEMBERS_SHOWN) {
        throw new RuntimeException('guild ' . $gid . ': ' . count($members) . ' members, want ' . MEMBERS_SHOWN);
    }
    return $out . '</ul>';
}

function page_stats(App $a, int $gid): string
{
    $g = guild_or_404($a, $gid);
    $activity = $a->q('guild_activity', [N_POSTS - SEASON_POSTS]);
    $rank = 0;
    $mine = null;
    foreach ($activity as $i => $row) {
        if ((int)$row['guild_id'] === $gid) {
            $rank = $i + 1;
            $mine = $row;
        }
    }
    if ($mine === null || count($activity) < N_GUILDS) {
        throw new RuntimeException("guild $gid is not in the activity of " . count($activity) . ' guilds');
    }
    $top = $a->q('top_posters', [$gid]);
    $out = '<h1 id="stats">Stats of ' . h($g['name']) . '</h1><p>rank <b id="rank">' . $rank . '</b> of ' . count($activity)
        . ', ' . h($mine['posts']) . ' posts, posters of average level ' . h($mine['avg_level']) . ', last post #' . h($mine['last_post'])
        . '</p><ol id="top-posters" data-posters="' . count($top) . '">';
    foreach ($top as $t) {
        $n = $a->q('player_name', [(int)$t['player_id']]);
        $out .= '<li>' . h($n[0]['name'] ?? '?') . ': ' . h($t['n']) . '</li>';
    }
    if (count($top) !== TOP_POSTERS) {
        throw new RuntimeException("guild $gid: " . count($top) . ' top posters, want ' . TOP_POSTERS);
    }
    return $out . '</ol>';
}

function page_inventory(App $a, int $pid): string
{
    $n = $a->q('player_name', [$pid]);
    if (!$n) {
        throw new HttpError(404, "no player $pid");
    }
    $items = $a->q('inventory', [$pid]);
    if (!$items) {
        throw new RuntimeException("player $pid has no items");
    }
    $out = '<h1 id="owner">' . h($n[0]['name']) . '</h1><ul id="inventory" data-items="' . count($items) . '">';
    foreach ($items as $it) {
        $out .= '<li class="item">' . h($it['kind']) . ' #' . h($it['id']) . ' rarity ' . h($it['rarity']) . ' power ' . h($it['power']) . '</li>';
    }
    return $out . '</ul>';
}

/**
 * rank_players orders players by a key derived from RANK_ROUNDS rounds of
 * sha256 over each one's name and score (deterministic), highest first,
 * ties by id: the CPU the ranking page burns.
 *
 * @param list<array{id: string, name: string, score: string}> $players
 * @return list<array{id: int, name: string, key: int}>
 */
function rank_players(array $players): array
{
    $ranked = [];
    foreach ($players as $p) {
        $h = $p['name'] . ':' . $p['score'];
        for ($i = 0; $i < RANK_ROUNDS; $i++) {
            $h = hash('sha256', $h . $i);
        }
        $ranked[] = ['id' => (int)$p['id'], 'name' => $p['name'], 'key' => hexdec(substr($h, 0, 7))];
    }
    usort($ranked, fn($x, $y) => [$y['key'], $x['id']] <=> [$x['key'], $y['id']]);
    return $ranked;
}

function page_ranking(App $a): string
{
    $players = $a->q('bracket', [1, RANKED_PLAYERS]);
    if (count($players) !== RANKED_PLAYERS) {
        throw new RuntimeException('ranking: ' . count($players) . ' players, want ' . RANKED_PLAYERS);
    }
    $ranked = rank_players($players);
    $out = '<h1 id="ranking" data-top="' . h($ranked[0]['name']) . '">Ranking</h1><ol>';
    foreach (array_slice($ranked, 0, 20) as $r) {
        $out .= '<li>' . h($r['name']) . ' <code>' . h($r['key']) . '</code></li>';
    }
    return $out . '</ol>';
}

function session_cookie(int $pid): string
{
    return $pid . '.' . hash_hmac('sha256', (string)$pid, SECRET);
}

function logged_in(): int
{
    $c = (string)($_COOKIE['gb_session'] ?? '');
    $pid = (int)strtok($c, '.');
    if ($pid <= 0 || !hash_equals(session_cookie($pid), $c)) {
        throw new HttpError(401, 'log in first');
    }
    return $pid;
}

function post_login(App $a): string
{
    $r = $a->q('login', [(string)($_POST['name'] ?? '')]);
    if (!$r) {
        throw new HttpError(401, 'no such player');
    }
    setcookie('gb_session', session_cookie((int)$r[0]['id']), ['path' => '/', 'httponly' => true]);
    $a->status = 303;
    $a->headers['Location'] = '/guilds/' . (int)$r[0]['guild_id'] . '/board';
    return 'logged in';
}

function post_post(App $a): string
{
    $pid = logged_in();
    $body = trim((string)($_POST['body'] ?? ''));
    if ($body === '' || strlen($body) > 140) {
        throw new HttpError(400, 'a post is 1 to 140 bytes');
    }
    $gid = ($pid - 1) % N_GUILDS + 1;
    $id = $a->exec('new_post', [$gid, $pid, $body, gmdate('Y-m-d H:i:s')]);
    $a->status = 201;
    return '<p id="posted">posted ' . $id . '</p>';
}

// ---- /initialize ----

function initialize(App $a): string
{
    foreach (SCHEMA as $s) {
        $a->raw($s);
    }
    $r = $a->raw("SELECT v FROM meta WHERE k = 'data'")->fetch_row();
    if (($r[0] ?? '') === DATA_VERSION && empty($_GET['full'])) {
        $a->raw('DELETE FROM posts WHERE id > ' . N_POSTS);
        $a->headers['Content-Type'] = 'application/json';
        return '{"language":"php","load":"reset"}';
    }
    set_time_limit(0);
    $t = hrtime(true);
    $cpu = cpu_us();
    $db = $a->dbNs;
    foreach (['meta', 'items', 'posts', 'memberships', 'players', 'guilds'] as $table) {
        $a->raw("TRUNCATE TABLE $table");
    }
    $ts = fn(int $sec) => gmdate('Y-m-d H:i:s', BASE_TIME + $sec);
    load($a, 'guilds (id, name, tag)', N_GUILDS, fn(int $g) => sprintf("(%d,'guild-%03d','%s')", $g, $g, chr(65 + $g % 26) . chr(65 + intdiv($g, 26) % 26) . chr(65 + ($g * 7) % 26)));
    load($a, 'players (id, name, level, score, guild_id, created_at)', N_PLAYERS, fn(int $p) => sprintf("(%d,'%s',%d,%d,%d,'%s')",
        $p, player_name_of($p), 1 + ($p * 37) % 60, ($p * 7919 + 13) % 100000, ($p - 1) % N_GUILDS + 1, $ts($p * 60)));
    // Player p is in guild (p-1) % N_GUILDS + 1; the first of each guild leads it.
    load($a, 'memberships (guild_id, player_id, role, joined_at)', N_PLAYERS, fn(int $p) => sprintf("(%d,%d,'%s','%s')",
        ($p - 1) % N_GUILDS + 1, $p, $p <= N_GUILDS ? 'leader' : ($p <= 5 * N_GUILDS ? 'officer' : 'member'), $ts(($p * 7) % 100000)));
    // Post i is in guild g = (i-1) % N_GUILDS + 1, by one of its 200 members
    // (unevenly: some post much more than others).
    load($a, 'posts (id, guild_id, player_id, body, created_at)', N_POSTS, function (int $i): string {
        $g = ($i - 1) % N_GUILDS + 1;
        $k = intdiv($i - 1, N_GUILDS);
        $j = ($k * $k * 7 + $k * 3 + $g) % (N_PLAYERS / N_GUILDS);
        $w = WORDS;
        return sprintf("(%d,%d,%d,'post %d: %s %s %s','%s')", $i, $g, $g + N_GUILDS * $j, $i,
            $w[$i % 16], $w[($i * 7) % 16], $w[($i * 13) % 16], gmdate('Y-m-d H:i:s', BASE_TIME + $i * 30));
    });
    load($a, 'items (id, player_id, kind, rarity, power)', N_ITEMS, fn(int $i) => sprintf('(%d,%d,\'%s\',%d,%d)',
        $i, ($i * 7919) % N_PLAYERS + 1, KINDS[$i % 8], ($i * 13) % 5, ($i * 104729) % 10000));
    $a->raw('ANALYZE TABLE guilds, players, memberships, posts, items');
    $a->raw("INSERT INTO meta VALUES ('data', '" . DATA_VERSION . "')");
    $a->headers['Content-Type'] = 'application/json';
    return json_encode(['language' => 'php', 'load' => 'full', 'seconds' => round((hrtime(true) - $t) / 1e9, 3),
        'php_cpu_seconds' => round((cpu_us() - $cpu) / 1e6, 3), 'db_seconds' => round(($a->dbNs - $db) / 1e9, 3)]);
}

/** load inserts rows 1..n of table with multi-row INSERTs of BATCH_ROWS, in one transaction. */
function load(App $a, string $table, int $n, callable $row): void
{
    $a->conn()->begin_transaction();
    for ($lo = 1; $lo <= $n; $lo += BATCH_ROWS) {
        $vals = [];
        for ($i = $lo; $i <= min($n, $lo + BATCH_ROWS - 1); $i++) {
            $vals[] = $row($i);
        }
        $a->raw("INSERT INTO $table VALUES " . implode(',', $vals));
    }
    $a->conn()->commit();
}

// ---- the front controller ----

/** route maps the request to its route name and page. */
function route(App $a, string $method, string $path): string
{
    $id = 0;
    $pattern = preg_replace_callback('#/(\d{1,9})(?=/|$)#', function ($m) use (&$id) {
        $id = (int)$m[1];
        return '/{id}';
    }, $path);
    $a->route = "$method $pattern";
    return match ($a->route) {
        'GET /' => page_home($a),
        'GET /guilds/{id}/board' => page_board($a, $id),
        'GET /guilds/{id}/members' => page_members($a, $id),
        'GET /guilds/{id}/stats' => page_stats($a, $id),
        'GET /players/{id}/inventory' => page_inventory($a, $id),
        'GET /ranking' => page_ranking($a),
        'POST /login' => post_login($a),
        'POST /posts' => post_post($a),
        'POST /initialize' => initialize($a),
        default => throw new HttpError(404, "no page $method $path"),
    };
}

function main(): void
{
    $start = microtime(true);
    $t0 = hrtime(true);
    $cpu0 = cpu_us();
    $method = $_SERVER['REQUEST_METHOD'] ?? 'GET';
    $path = (string)parse_url($_SERVER['REQUEST_URI'] ?? '/', PHP_URL_PATH);
    $settings = [];
    $a = null;
    try {
        $settings = read_json(__DIR__ . '/settings.json');
        $a = new App($settings, read_json(__DIR__ . '/config.json'));
        $body = route($a, $method, $path);
    } catch (HttpError $e) {
        $a ??= new App($settings, []);
        $a->status = $e->status;
        $a->headers = ['Content-Type' => 'text/plain; charset=utf-8'];
        $body = $e->getMessage() . "\n";
    } catch (Throwable $e) {
        $a ??= new App($settings, []);
        $a->status = 500;
        $a->headers = ['Content-Type' => 'text/plain; charset=utf-8'];
        $body = 'error: ' . $e->getMessage() . "\n";
        error_log("guildboard: $method $path: $e");
    }
    if ($a->db !== null) {
        $t = hrtime(true);
        $a->db->close();
        $a->dbNs += hrtime(true) - $t;
    }
    ksort($a->stats);
    $counts = [];
    $queries = [];
    foreach ($a->stats as $id => $s) {
        $counts[] = "$id={$s['calls']}";
        $queries[$id] = ['sql' => STATEMENTS[$id], 'calls' => $s['calls'], 'ms' => round($s['ns'] / 1e6, 3)];
    }
    $cpuMs = (cpu_us() - $cpu0) / 1000;
    $wallMs = (hrtime(true) - $t0) / 1e6;
    $dbMs = $a->dbNs / 1e6;
    http_response_code($a->status);
    foreach ($a->headers as $k => $v) {
        header("$k: $v");
    }
    header('X-App-Queries: ' . implode(',', $counts));
    header(sprintf('X-App-DB-Ms: %.3f', $dbMs));
    header(sprintf('X-App-CPU-Ms: %.3f', $cpuMs));
    header(sprintf('X-App-Wall-Ms: %.3f', $wallMs));
    echo $body;
    $log = (string)($settings['request_log'] ?? '');
    if ($log !== '') {
        $line = json_encode([
            'start' => round($start, 6), 'end' => round($start + $wallMs / 1000, 6), 'pid' => getmypid(),
            'method' => $method, 'route' => $a->route, 'path' => $path, 'status' => $a->status,
            'wall_ms' => round($wallMs, 3), 'cpu_ms' => round($cpuMs, 3), 'db_ms' => round($dbMs, 3),
            'queries' => (object)$queries,
        ], JSON_UNESCAPED_SLASHES) . "\n";
        file_put_contents($log, $line, FILE_APPEND | LOCK_EX);
    }
}

main();
