module github.com/mrtr-state/mrtr-state/go

go 1.26
