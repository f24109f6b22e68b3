module github.com/kinfer/kinfer

go 1.26

require (
	github.com/BurntSushi/toml v1.6.0
	github.com/tetratelabs/wazero v1.12.0
	gonum.org/v1/gonum v0.17.0
)

require golang.org/x/sys v0.44.0
