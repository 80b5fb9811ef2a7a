// Package inventory reads the hosts of a fleet from an Ansible INI
// inventory, so users hand stacktune the file they already keep:
//
//	web1.example.com ansible_host=10.0.0.11
//	[web]
//	web[01:40].example.com ansible_user=deploy
//	[db]
//	db1 ansible_host=10.0.1.5 ansible_port=2222 ansible_ssh_private_key_file=~/.ssh/db.pem
//	[web:vars]
//	stacktune_collect_args="--nginx-conf /etc/nginx/nginx.conf"
//	[prod:children]
//	web
//	db
//
// Groups are roles: a host's Role is the first group that lists it
// directly, in file order ("ungrouped" for hosts before any section), and
// Groups holds every group it belongs to, parents through :children
// included. The connection variables stacktune uses are ansible_host
// (ansible_ssh_host), ansible_port (ansible_ssh_port), ansible_user
// (ansible_ssh_user) and ansible_ssh_private_key_file; "host:port" in a
// host pattern sets the port as in Ansible. Variables are merged as Ansible
// merges them: all:vars, then each group's vars from the outermost parent
// inward (groups of the same depth by name), then the host line's own. Every
// variable is kept in Host.Vars, so the fleet layer can read its own
// (stacktune_collect_args, stacktune_apply_args, stacktune_binary).
//
// Ranges ([01:50], [a:f], [0:10:2]) expand as Ansible expands them (a
// zero-padded start as long as its end, letters a-z then A-Z). A pattern is
// counted before it is expanded, in checked arithmetic (bounds, step,
// padding, the product of its ranges), and expanded in time linear in the
// names it makes. Everything is bounded: the file (MaxBytes), a line
// (MaxLine), a name (253 bytes), the hosts after expansion (MaxHosts, the
// line that passes it named), the hosts' merged variables and groups
// (MaxHostEntries) and the nesting of :children (a cycle is an error).
// A line that cannot be read is an error naming the file and line;
// Parse reports every such line at once (Errors), never a panic.
// YAML inventories, dynamic inventory scripts and host_vars/group_vars
// directories are not read: Parse says so when it is handed YAML.
package inventory
