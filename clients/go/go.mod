module github.com/robotsd/robotsd/clients/go

go 1.19
