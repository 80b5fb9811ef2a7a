module github.com/stacktune/stacktune

go 1.26
